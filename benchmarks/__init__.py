"""Benchmark programs: each writes JSON + Markdown (and PNG plots) under docs/benchmarks/."""
