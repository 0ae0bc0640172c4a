"""One long line (issue 25 item 8): a Markdown file that is one 2 MB line, against the same text
split into lines, through `memflow memorize --progress json` in a child process.

The text is the generated journal of benchmarks/ingest_long.py (English and Chinese paragraphs,
no dataset text) without its headings: ``lines`` has one paragraph per line, ``one-line`` the
same paragraphs joined by spaces. Each run memorises into its own scratch database. Reported:
seconds until the first progress line, the longest silence between two progress lines, the
wall time, and one-line / lines. With ``--base-tree`` (a worktree of the commit before the
change), the same two inputs at ``--base-kb`` also run with that tree's memflow.

Run: ``python -m benchmarks.long_line [--kb 2048] [--embedder hash|local] [--base-tree DIR]``
(``--quick``: 20 KB; the test suite runs it as a smoke test).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.ingest_long import common_commit, journal


def texts(kb: int) -> dict[str, str]:
    """The same paragraphs, one a line and all on one line."""
    paragraphs = [p for p in journal(kb).splitlines() if p.strip() and not p.startswith("#")]
    return {"lines": "\n".join(paragraphs) + "\n", "one-line": " ".join(paragraphs) + "\n"}


def run_cli(tree: Path, url: str, path: Path, embedder: str, timeout: float) -> dict[str, Any]:
    """`memflow memorize` of ``path`` with ``tree``'s memflow (after its `db upgrade`); times
    its progress lines from the start of the memorize process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MEMFLOW_DATABASE_URL": url,
           "MEMFLOW_EMBEDDER": embedder, "OMP_WAIT_POLICY": "PASSIVE"}  # fmt: skip
    upgrade = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "db", "upgrade"],
        env=env, cwd=tree, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if upgrade.returncode != 0:
        raise RuntimeError(f"db upgrade failed in {tree}: {upgrade.stderr[-2000:]}")
    cmd = [sys.executable, "-m", "memflow.cli", "memorize", str(path), "--dataset", "line",
           "--extractor", "rules", "--progress", "json", "--json"]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None and proc.stdout is not None
    stamps: list[float] = []
    first_cpu: float | None = None
    other: list[str] = []
    for line in proc.stderr:
        if line.startswith("{"):
            stamps.append(time.perf_counter() - started)
            if first_cpu is None:
                first_cpu = cpu_seconds(proc.pid)
        else:
            other.append(line)
    out = proc.stdout.read()
    code = proc.wait(timeout=timeout)
    seconds = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"memorize failed ({code}) in {tree}: {''.join(other)[-2000:]}")
    report = json.loads(out)
    doc = report["documents"][0]
    gaps = [b - a for a, b in zip([0.0, *stamps], [*stamps, seconds], strict=True)]
    return {
        "seconds": round(seconds, 1),
        "first_progress_s": round(stamps[0], 2) if stamps else None,
        "first_progress_cpu_s": None if first_cpu is None else round(first_cpu, 2),
        "longest_silence_s": round(max(gaps), 1),
        "progress_lines": len(stamps),
        "status": doc["status"],
        "facet_points": doc["facet_points"],
    }


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds the process ``pid`` has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_pair(tree: Path, admin: str, kb: int, embedder: str, work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"kb": kb}
    for name, body in texts(kb).items():
        path = work / f"{name}-{kb}.md"
        path.write_text(body, encoding="utf-8")
        out[f"{name}_bytes"] = path.stat().st_size
        with common.scratch_database(admin, "mfbench_line", migrated=False) as url:
            out[name] = run_cli(tree, url, path, embedder, timeout=6 * 3600)
    out["one_line_over_lines"] = round(out["one-line"]["seconds"] / out["lines"]["seconds"], 2)
    return out


HEADER = ["tree", "KB", "input", "bytes", "first progress s", "its CPU s", "longest silence s",
          "progress lines", "seconds", "points"]  # fmt: skip


def markdown(data: dict[str, Any]) -> str:
    rows = []
    for run in data["runs"]:
        for name in ("lines", "one-line"):
            r = run[name]
            rows.append([run["tree"], run["kb"], name, run[f"{name}_bytes"], r["first_progress_s"],
                         r.get("first_progress_cpu_s", ""), r["longest_silence_s"], r["progress_lines"], r["seconds"],
                         r["facet_points"]])  # fmt: skip
    ratios = [f"{run['tree']} at {run['kb']} KB: one-line / lines = {run['one_line_over_lines']}"
              for run in data["runs"]]  # fmt: skip
    return "\n".join(
        [
            "# One long line (issue 25 item 8)",
            "",
            common.stamp_markdown(data["stamp"]),
            "",
            "`memflow memorize FILE --progress json` in a child process per run, each into its own "
            "scratch database; the journal of benchmarks/ingest_long.py without headings, one "
            "paragraph a line (lines) or all paragraphs on one line (one-line). first progress = "
            "seconds from the process start to its first progress line, and the CPU time the "
            "process had used by then (what does not depend on the machine's load); longest "
            "silence = the "
            "longest time without one (start and end included). Seconds are wall time on a shared "
            "2-core machine.",
            "",
            common.md_table(HEADER, rows),
            "",
            *[f"- {r}" for r in ratios],
            "",
            "Targets: first progress within 5 s; one-line at most 2 x lines.",
            "",
            f"Command: `python -m benchmarks.long_line {data['argv']}`.",
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kb", type=int, default=2048)
    p.add_argument("--embedder", default="hash", help="MEMFLOW_EMBEDDER of the runs")
    p.add_argument("--base-tree", type=Path, default=None, help="worktree of the commit before")
    p.add_argument("--base-kb", type=int, default=200, help="size the base tree runs at")
    p.add_argument("--quick", action="store_true", help="20 KB, for the test suite's smoke test")
    p.add_argument("--database-url", default=None)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    p.add_argument(
        "--render-only", action="store_true", help="rewrite long-line.md from long-line.json"
    )
    args = p.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "long-line", [], markdown)
    if args.quick:
        args.kb, args.base_kb = 20, 20
    admin = common.server_url(args.database_url, args.home)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trees = [("this", common.REPO, args.kb)]
        if args.base_tree is not None:
            trees.insert(0, (common_commit(args.base_tree)[:12], args.base_tree, args.base_kb))
            trees.append(("this", common.REPO, args.base_kb))
        for label, tree, kb in trees:
            runs.append({"tree": label, **run_pair(tree, admin, kb, args.embedder, work)})
    shown = " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if "://" not in a)
    data = {
        "stamp": common.stamp({"kb": args.kb, "embedder": args.embedder, "quick": args.quick,
                               "base_kb": args.base_kb if args.base_tree else None}),
        "argv": shown,
        "runs": runs,
    }  # fmt: skip
    common.write_json(args.out / "long-line.json", data)
    common.write_text(args.out / "long-line.md", markdown(data))
    print(markdown(data))
    return data


if __name__ == "__main__":
    main()
