"""Programs that make the repository's docs (run from the repository root: python -m scripts.X)."""
