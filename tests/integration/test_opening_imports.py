"""Opening a store checks its schema without loading Alembic (issue 28: a command that starts at
once); Alembic loads only to migrate. The revisions it reads agree with Alembic's."""

from __future__ import annotations

import subprocess
import sys

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from memflow.db import migrate

from ..conftest import REPO


def test_opening_and_searching_a_store_loads_no_alembic(db_url: str) -> None:
    code = (
        "import sys; from memflow import Memory\n"
        "with Memory.open(sys.argv[1], embedder='hash') as mem:\n"
        "    mem.dataset('notes').search('anything')\n"
        "name = Memory.recorded_embedder(sys.argv[1], 'notes')\n"
        "print(name, sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))"
    )
    res = subprocess.run([sys.executable, "-c", code, db_url], capture_output=True, text=True,
                         timeout=120, cwd=REPO)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split(None, 1) == ["hash:384", "[]\n"], res.stdout


def test_the_revisions_read_without_alembic_are_alembics(db_url: str) -> None:
    assert (
        migrate.head_revision()
        == ScriptDirectory.from_config(migrate.alembic_config()).get_current_head()
    )
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            ctx = MigrationContext.configure(conn, opts={"version_table_schema": "memflow"})
            current = migrate.current_revision(conn)
            assert current is not None and current == ctx.get_current_revision()
    finally:
        engine.dispose()
