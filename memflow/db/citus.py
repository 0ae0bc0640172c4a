"""The Citus layout of a memflow store, read from its catalog (docs/scale-out.md).

Every table that has ``dataset_id`` is distributed by it, all co-located, so one dataset's rows
sit on one shard group and every statement (each is scoped to one ``dataset_id``) is routed to a
single node -- which is also what lets the recursive projection of ``sql/recall.sql`` run at all
(Citus plans recursive CTEs only inside one shard). The few tables without it are reference
tables, copied to every node: ``dataset`` (one row per tenant, read by name on every open, whose
name must stay unique across the whole cluster) and ``store_meta``; ``alembic_version`` stays a
local table of the coordinator, where migrations run.

:func:`violations` names every key that would stop ``create_distributed_table``: a primary key,
unique constraint or unique index of a distributed table that does not start with dataset_id, a
foreign key between distributed tables that does not join on it, or one from a reference table to
a distributed table. :func:`layout_sql` prints the calls that distribute a store.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from memflow.db.queries import q, raw

DISTRIBUTION_COLUMN = "dataset_id"
REFERENCE_TABLES = ("dataset", "store_meta")  # declared: tables without dataset_id
ANCHOR = "node"  # the first distributed table; the others are co-located with it
LOCAL_TABLES = ("alembic_version",)  # migration bookkeeping: stays on the coordinator
SCHEMA = "memflow"


@dataclass(frozen=True)
class Layout:
    reference: tuple[str, ...]
    distributed: tuple[str, ...]  # parents before the tables whose foreign keys point at them
    violations: tuple[str, ...]


def layout(conn: Connection) -> Layout:
    tables = {
        r.table_name: bool(r.has_dataset_id)
        for r in conn.execute(q("citus_tables"))
        if r.table_name not in LOCAL_TABLES
    }
    keys = [k for k in conn.execute(q("citus_keys")) if k.table_name in tables]
    problems = [
        f"table {t} has no {DISTRIBUTION_COLUMN} column and is not a declared reference table "
        f"({', '.join(REFERENCE_TABLES)}): add {DISTRIBUTION_COLUMN} or declare it in "
        "memflow/db/citus.py (and docs/scale-out.md)"
        for t, has in tables.items()
        if not has and t not in REFERENCE_TABLES
    ]
    parents: dict[str, set[str]] = {t: set() for t in tables}
    for k in keys:
        reference = k.table_name in REFERENCE_TABLES
        if k.kind == "f":
            parents[k.table_name].add(k.ref_table)
            if reference and k.ref_table not in REFERENCE_TABLES:
                problems.append(
                    f"foreign key {k.name}: reference table {k.table_name} points at "
                    f"distributed table {k.ref_table} (Citus allows only the other way round)"
                )
            elif not reference and (
                k.first_column != DISTRIBUTION_COLUMN
                or (
                    k.ref_table not in REFERENCE_TABLES
                    and k.ref_first_column != DISTRIBUTION_COLUMN
                )
            ):
                problems.append(
                    f"foreign key {k.name} of {k.table_name} does not join on "
                    f"{DISTRIBUTION_COLUMN} first: lead both column lists with it"
                )
        elif not reference and k.first_column != DISTRIBUTION_COLUMN:
            what = {"p": "primary key", "u": "unique constraint", "i": "unique index"}[k.kind]
            problems.append(
                f"{what} {k.name} of {k.table_name} starts with {k.first_column}, not "
                f"{DISTRIBUTION_COLUMN}: a distributed table's unique keys must contain it "
                "(lead with it)"
            )
    distributed = _parents_first([t for t in tables if t not in REFERENCE_TABLES], parents)
    present = tuple(t for t in REFERENCE_TABLES if t in tables)
    return Layout(present, tuple(distributed), tuple(problems))


def layout_sql(lay: Layout) -> str:
    """The calls that turn a migrated store into a Citus layout (run on the coordinator)."""

    def call(name: str, table: str, colocate: str = "") -> str:
        sql = " ".join(ln for ln in raw(name).splitlines() if not ln.startswith("--"))
        return sql.replace(":table", f"'{SCHEMA}.{table}'").replace(":colocate", colocate) + ";"

    lines = [call("citus_reference_table", t) for t in lay.reference]
    anchor = lay.distributed[0] if lay.distributed else ""
    for t in lay.distributed:
        colocate = "'default'" if t == anchor else f"'{SCHEMA}.{anchor}'"
        lines.append(call("citus_distributed_table", t, colocate))
    return "\n".join(lines)


def _parents_first(tables: list[str], parents: dict[str, set[str]]) -> list[str]:
    """Tables ordered so that each comes after every table its foreign keys reference."""
    done: list[str] = []
    pending = sorted(tables, key=lambda t: (t != ANCHOR, t))
    while pending:
        ready = [t for t in pending if parents[t] <= set(done) | set(REFERENCE_TABLES) | {t}]
        if not ready:  # a cycle: keep the rest in name order
            ready = pending[:1]
        done.append(ready[0])
        pending.remove(ready[0])
    return done
