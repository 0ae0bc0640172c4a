"""Named SQL statements from ``sql/*.sql``.

Each statement sits under a ``-- name: <name>`` header, the way a psql user can read and run it
(parameters are ``:name``, as in psql variables and SQLAlchemy ``text()``). Files are parsed once.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from sqlalchemy import TextClause, text

from memflow.errors import ConfigurationError

_HEADER = re.compile(r"^--\s*name:\s*([a-z0-9_]+)\s*$", re.MULTILINE)


def sql_dir() -> Path:
    pkg = Path(__file__).resolve().parent.parent
    for candidate in (pkg / "sql", pkg.parent / "sql"):
        if candidate.is_dir():
            return candidate
    raise ConfigurationError(
        "memflow's sql/ directory is missing from the installation; reinstall memflow"
    )


def parse_named(source: str) -> dict[str, str]:
    parts = _HEADER.split(source)
    out: dict[str, str] = {}
    for i in range(1, len(parts), 2):
        body = parts[i + 1].strip().rstrip(";").strip()
        if parts[i] in out:
            raise ConfigurationError(f"duplicate SQL statement name {parts[i]!r}")
        out[parts[i]] = body
    return out


@functools.cache
def all_queries() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(sql_dir().glob("*.sql")):
        for name, body in parse_named(path.read_text(encoding="utf-8")).items():
            if name in out:
                raise ConfigurationError(f"SQL statement {name!r} defined twice (in {path.name})")
            out[name] = body
    return out


def raw(name: str) -> str:
    try:
        return all_queries()[name]
    except KeyError:
        raise ConfigurationError(f"no SQL statement named {name!r} in {sql_dir()}") from None


@functools.cache
def q(name: str) -> TextClause:
    """The statement ``name`` as a SQLAlchemy text clause."""
    return text(raw(name))


WHERE_MARK = "/*where*/ true"


def with_condition(name: str, condition: str) -> TextClause:
    """The statement ``name`` with its ``/*where*/ true`` replaced by ``condition``: a boolean
    expression compiled by :mod:`memflow.db.filters`, whose keys and values are all bind
    parameters (no caller text becomes SQL)."""
    body = raw(name)
    if WHERE_MARK not in body:
        raise ConfigurationError(f"SQL statement {name!r} has no {WHERE_MARK!r} to filter on")
    return text(body.replace(WHERE_MARK, condition))
