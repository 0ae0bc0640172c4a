"""Where settings come from: explicit arguments first, then MEMFLOW_* variables, then defaults.

Nothing is read at import time; call the functions when opening a store.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def memflow_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding the embedded server's data (``MEMFLOW_HOME``, else the user data dir)."""
    if home is not None:
        return Path(home).expanduser().resolve()
    env = os.environ.get("MEMFLOW_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("memflow", appauthor=False)).resolve()


def database_url(explicit: str | None = None) -> str | None:
    """The external database URL, or None for the embedded server."""
    return explicit or os.environ.get("MEMFLOW_DATABASE_URL") or None


def embedder_spec(explicit: str | None = None) -> str:
    return explicit or os.environ.get("MEMFLOW_EMBEDDER") or "local"


def sqlalchemy_url(url: str) -> str:
    """Accept libpq-style URLs and point SQLAlchemy at psycopg 3."""
    for prefix in ("postgresql+psycopg2://", "postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def libpq_url(url: str) -> str:
    """The same URL in the form psql understands."""
    if url.startswith("postgresql+psycopg://"):
        return "postgresql://" + url[len("postgresql+psycopg://") :]
    return url
