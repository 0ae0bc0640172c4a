"""Shared benchmark plumbing: result stamps, percentiles, writers, scratch databases."""

from __future__ import annotations

import json
import os
import platform
import subprocess
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


def _git(*args: str) -> str:
    try:
        res = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout.strip()


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


def stamp(settings: dict[str, Any]) -> dict[str, Any]:
    """Commit, machine, date and the settings a result was produced with."""
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _git("rev-parse", "HEAD") or "unknown",
        "dirty": bool(dirty),
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
        json.dumps(data, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8"
    )


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def render_only(
    out: Path, stem: str, notes: Sequence[str], markdown: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """Rewrite ``<stem>.md`` from the saved ``<stem>.json``, appending ``notes`` to its notes."""
    saved: dict[str, Any] = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
    saved["notes"] = list(saved.get("notes", [])) + list(notes)
    write_json(out / f"{stem}.json", saved)
    write_text(out / f"{stem}.md", markdown(saved))
    return saved


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def stamp_markdown(st: dict[str, Any]) -> str:
    m = st["machine"]
    commit = st["commit"][:12] + (" (with uncommitted changes)" if st.get("dirty") else "")
    return (
        f"- commit: `{commit}`\n- date: {st['date']}\n"
        f"- machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, {m['os']}, "
        f"Python {m['python']}, load average at the end {m.get('load_avg_1_5_15')}\n"
        f"- settings: `{json.dumps(st['settings'], sort_keys=True, default=str)}`"
    )


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


@contextmanager
def scratch_database(
    admin_url: str, prefix: str, *, keep: bool = False, migrated: bool = True
) -> Iterator[str]:
    """A new database on the server of ``admin_url``, migrated to head (unless ``migrated`` is
    false: another tree's code migrates it); dropped afterwards."""
    from memflow.db import engine as dbe
    from memflow.db import migrate

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(admin_url, name)
    try:
        if migrated:
            eng = dbe.make_engine(url, pool_size=1)
            try:
                with eng.begin() as conn:
                    migrate.upgrade(conn, embedding_dim=384)
            finally:
                eng.dispose()
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
