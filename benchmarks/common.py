"""Shared benchmark plumbing: result stamps, percentiles, writers, scratch databases."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import psycopg
from sqlalchemy.engine import make_url

from memflow.config import libpq_url

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "docs" / "benchmarks"
DEFAULT_HOME = Path.home() / ".cache" / "memflow-bench"


def shared_data(name: str) -> Path:
    """A file of the evaluation data, kept outside the repository in ``shared/data/`` beside
    the clone (``../shared/data``), or beside a folder above it (a worktree in a subfolder)."""
    for parent in REPO.parents:
        path = parent / "shared" / "data" / name
        if path.exists():
            return path
    return REPO.parent / "shared" / "data" / name


def _git(*args: str) -> str:
    try:
        res = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout.rstrip() if res.returncode == 0 else ""


def _git_ok(*args: str) -> bool:
    try:
        res = subprocess.run(["git", *args], cwd=REPO, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def script_of(script: str | Path) -> str:
    """A script's path relative to the repository (as git names it)."""
    path = Path(script)
    path = (path if path.is_absolute() else REPO / path).resolve()
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)


def command_line(script: str, argv: Sequence[str] | None = None) -> str | None:
    """``python -m <module> <args>`` for ``script`` (a path relative to the repository): with
    ``argv``, or from ``sys.argv`` when the script is the program running (None otherwise)."""
    if argv is None:
        if not sys.argv or script_of(sys.argv[0]) != script:
            return None
        argv = sys.argv[1:]
    module = script.removesuffix(".py").replace("/", ".")
    return shlex.join(["python", "-m", module, *argv])


def stamp(
    settings: dict[str, Any], script: str | Path | None = None, argv: Sequence[str] | None = None
) -> dict[str, Any]:
    """Commit, machine, date and the settings a result was produced with, and the script that
    produced it (default: the module that calls this) with its command line (``argv``, or the
    program's own arguments when the script is the program running).

    ``dirty`` counts every change git sees: modified, staged and deleted tracked files and
    untracked ones (ignored files aside), listed in ``changes``. ``script_commit`` is the commit
    that last changed the script; ``script_in_head`` says that HEAD contains that commit and the
    script is committed and unmodified: the figures come from a command anyone can check out."""
    if script is None:
        script = sys._getframe(1).f_globals.get("__file__") or "unknown"
    rel = script_of(script)
    changes = _git("status", "--porcelain", "--untracked-files=all").splitlines()
    head = _git("rev-parse", "HEAD") or "unknown"
    script_commit = _git("log", "-1", "--format=%H", "--", rel) or None
    touched = any(line[3:].split(" -> ")[-1] == rel for line in changes)
    in_head = (
        script_commit is not None
        and not touched
        and _git_ok("merge-base", "--is-ancestor", script_commit, head)
    )
    return {
        "commit": head,
        "dirty": bool(changes),
        "changes": changes[:100],
        "script": rel,
        "script_commit": script_commit,
        "script_in_head": in_head,
        "command": command_line(rel, argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "settings": settings,
    }


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan"), "mean": float("nan")}
    arr = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {
        "p50": round(float(p50), 3),
        "p95": round(float(p95), 3),
        "p99": round(float(p99), 3),
        "mean": round(float(arr.mean()), 3),
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process (Linux reports ru_maxrss in KiB). The kernel
    updates that high-water mark lazily, so it can trail the current RSS: the peak is at least
    what is resident now."""
    import resource

    peak = float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
    return round(max(peak, float(psutil.Process().memory_info().rss) / 2**20), 1)


def rss_mb() -> float:
    return round(float(psutil.Process().memory_info().rss) / 2**20, 1)


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def render_only(
    out: Path, stem: str, notes: Sequence[str], markdown: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """Rewrite ``<stem>.md`` from the saved ``<stem>.json`` (after a change of the script's
    template), appending ``notes`` to its notes. The json keeps the run's stamp and records each
    re-render (``rendered``: the commit, the date, how many notes it added)."""
    saved: dict[str, Any] = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
    saved["notes"] = list(saved.get("notes", [])) + list(notes)
    saved.setdefault("rendered", []).append(
        {
            "commit": _git("rev-parse", "HEAD") or "unknown",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "notes_added": len(notes),
        }
    )
    write_json(out / f"{stem}.json", saved)
    write_text(out / f"{stem}.md", markdown(saved))
    return saved


def page_args(ap: argparse.ArgumentParser, name: str, out: Path | None = None) -> None:
    """The options of a script that writes a page: ``--out`` (default ``out``: None prints the
    page only), ``--name`` (the files' stem, default ``name``), ``--note`` and
    ``--render-only`` (see :func:`render_only`)."""
    ap.add_argument("--out", type=Path, default=out, help="write <name>.json and .md here")
    ap.add_argument("--name", default=name, help="result file stem under --out")
    ap.add_argument("--note", action="append", default=[], help="a note for the page")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite NAME.md from NAME.json under --out (with --note): nothing is run",
    )


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# A result written before stamps were nested under "stamp" (benchmarks/locomo.py until a8f36e7)
# holds these fields of its stamp at its top level.
FLAT_STAMP_FIELDS = ("commit", "dirty", "date", "machine", "settings")


def stamp_in(res: dict[str, Any]) -> dict[str, Any]:
    """The stamp of a result: ``res["stamp"]``, or the top-level fields of a result written
    before stamps were nested (read as they are, nothing added)."""
    if isinstance(res.get("stamp"), dict):
        return dict(res["stamp"])
    return {k: res[k] for k in FLAT_STAMP_FIELDS if k in res}


def stamp_markdown(st: dict[str, Any], script: str | None = None) -> str:
    """The stamp as a list; the command is the stamp's, or (a stamp written before stamps held
    it) the module of ``script`` (default: the calling script) with its arguments in the
    settings."""
    m = st["machine"]
    commit = st["commit"][:12] + (" (with uncommitted changes)" if st.get("dirty") else "")
    command = f"`{st['command']}`" if st.get("command") else None
    if command is None:
        script = (
            st.get("script") or script or script_of(sys._getframe(1).f_globals.get("__file__", ""))
        )
        command = f"`{command_line(script, [])}` (its arguments: the settings below)"
    lines = [f"- commit: `{commit}`", f"- command: {command}"]
    if st.get("script"):  # stamps written before they named their script have none
        lines.append(
            f"- script: `{st['script']}`, last changed in `{(st.get('script_commit') or '?')[:12]}`"
            + ("" if st.get("script_in_head") else " (NOT the committed script)")
        )
    lines += [
        f"- date: {st['date']}",
        f"- machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, "
        f"Python {m['python']}, load average at the end {m.get('load_avg_1_5_15')}",
        f"- settings: `{json.dumps(st['settings'], sort_keys=True, default=str)}`",
    ]
    return "\n".join(lines)


def server_url(database_url: str | None, home: Path | None) -> str:
    """The admin URL (SQLAlchemy form) of the server benchmarks create their databases on."""
    if database_url:
        from memflow.config import sqlalchemy_url

        return sqlalchemy_url(database_url)
    from memflow.db.embedded import EmbeddedServer

    server = EmbeddedServer(home or DEFAULT_HOME)
    server.start()
    return server.url()


def with_database(url: str, name: str) -> str:
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def migrate_database(url: str) -> None:
    """Bring the database at ``url`` to this tree's schema head (384-dimension vectors)."""
    from memflow.db import engine as dbe
    from memflow.db import migrate

    eng = dbe.make_engine(url, pool_size=1)
    try:
        with eng.begin() as conn:
            migrate.upgrade(conn, embedding_dim=384)
    finally:
        eng.dispose()


@contextmanager
def scratch_database(
    admin_url: str, prefix: str, *, keep: bool = False, migrated: bool = True
) -> Iterator[str]:
    """A new database on the server of ``admin_url``, migrated to head (unless ``migrated`` is
    false: another tree's code migrates it); dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(admin_url, name)
    try:
        if migrated:
            migrate_database(url)
        yield url
    finally:
        if not keep:
            with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def server_facts(url: str) -> dict[str, str]:
    names = (
        "server_version", "shared_buffers", "work_mem", "maintenance_work_mem",
        "effective_cache_size", "max_parallel_workers_per_gather", "max_parallel_maintenance_workers",
    )  # fmt: skip
    out: dict[str, str] = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for n in names:
            row = conn.execute(f"SHOW {n}").fetchone()
            out[n] = str(row[0]) if row else ""
        row = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        out["pgvector"] = str(row[0]) if row else ""
    return out


def parse_sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        p = part.strip().lower().replace("_", "")
        if not p:
            continue
        mult = 1
        if p.endswith("k"):
            mult, p = 1000, p[:-1]
        elif p.endswith("m"):
            mult, p = 1_000_000, p[:-1]
        out.append(int(float(p) * mult))
    return out
