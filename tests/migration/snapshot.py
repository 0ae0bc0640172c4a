"""Build a store at a revision and compare its catalog with the committed snapshot (or write it).

    python -m tests.migration.snapshot                 # compare: head vs snapshots/<head>.json
    python -m tests.migration.snapshot --write         # (re)write snapshots/<head>.json
    python -m tests.migration.snapshot --revision 0002 --url postgresql+psycopg://...

Without ``--url`` it starts a throwaway embedded server. A snapshot records what a released
revision creates: write one when you add a revision (and review its diff like code); never
rewrite the snapshot of a released revision, which tests/migration checks the frozen scripts
against.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy.engine import make_url

from memflow.config import libpq_url
from memflow.db import engine as dbe
from memflow.db import migrate

from .catalog import Catalog, differences, snapshot_path, write_snapshot

DIM = 384


@contextmanager
def _server_url(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from memflow.db.embedded import EmbeddedServer

    from ..conftest import server_home

    server = EmbeddedServer(server_home())
    server.start()
    try:
        yield server.url()
    finally:
        server.destroy()


@contextmanager
def scratch_store(admin_url: str) -> Iterator[str]:
    """An empty database of its own on the server of ``admin_url``, dropped afterwards."""
    name = f"mf_snap_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(libpq_url(admin_url), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def store_catalog(url: str, *steps: str) -> Catalog:
    """Migrate the store at ``url`` through ``steps`` (revisions, "head", "base") and read it."""
    from .catalog import catalog

    eng = dbe.make_engine(url, pool_size=1)
    try:
        chain: list[str | None] = [None, *migrate.revision_chain()]
        for step in steps:
            target = None if step == "base" else migrate.resolve_revision(step)
            with eng.begin() as conn:
                current = migrate.current_revision(conn)
                if chain.index(target) < chain.index(current):
                    migrate.downgrade(conn, step)
                else:
                    migrate.upgrade(conn, embedding_dim=DIM, revision=step)
        with eng.connect() as conn:
            return catalog(conn)
    finally:
        eng.dispose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--revision", default="head")
    ap.add_argument("--url", help="a superuser URL of a PostgreSQL + pgvector server")
    ap.add_argument("--write", action="store_true", help="write the snapshot instead of comparing")
    args = ap.parse_args(argv)
    rev = migrate.resolve_revision(args.revision)
    with _server_url(args.url) as admin, scratch_store(admin) as url:
        facts = store_catalog(url, rev)
    if args.write:
        path = write_snapshot(
            rev,
            facts,
            f"catalog of a fresh store at revision {rev} ({DIM}-dim); "
            "written by python -m tests.migration.snapshot --write",
        )
        print(f"wrote {path}")
        return 0
    from .catalog import load_snapshot

    if not snapshot_path(rev).exists():
        print(f"no snapshot for {rev}: write it with --write", file=sys.stderr)
        return 1
    diff = differences(load_snapshot(rev), facts)
    print("\n".join(diff) or f"revision {rev}: catalog equals {snapshot_path(rev)}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
