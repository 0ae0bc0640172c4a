"""Procedure versions: a procedure memorised again with other content supersedes the current
version of its key (a ``supersedes`` edge, the old one's status ``superseded``); the same content
is the same node (ids follow content), so nothing is duplicated."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from sqlalchemy import Connection

from memflow.db.queries import q
from memflow.ids import make_id
from memflow.store.plan import EdgeRow, WritePlan


def version_procedures(
    conn: Connection, dataset_id: uuid.UUID, plan: WritePlan
) -> Callable[[Connection, uuid.UUID], None] | None:
    """Number the plan's new procedures after the stored versions of their keys and link them to
    the current ones (``supersedes``); returns what settles the statuses in the document's
    transaction: its procedures current, every other version of their keys superseded (under a
    lock per key, so concurrent writers of one key leave one current version)."""
    procs = [plan.nodes[p] for p in plan.procedure_ids]
    keys = sorted({p.canonical_name for p in procs if p.canonical_name})
    if not keys:
        return None
    rows = conn.execute(q("procedure_versions"), {"dataset_id": dataset_id, "keys": keys}).all()
    stored = {r.id for r in rows}
    for proc in procs:
        if proc.id in stored:
            continue  # the same content again: the stored node (made current again if it was not)
        mine = [r for r in rows if r.canonical_name == proc.canonical_name]
        if not mine:
            continue
        proc.props["version"] = max(r.version for r in mine) + 1
        for r in mine:
            if r.status != "current":
                continue
            eid = make_id(dataset_id, "edge", proc.id, "supersedes", r.id)
            text = f"{proc.name} (version {proc.props['version']}) supersedes version {r.version}"
            plan.edges[eid] = EdgeRow(eid, proc.id, "supersedes", r.id, text)
    ids = [p.id for p in procs]

    def settle(c: Connection, ds: uuid.UUID) -> None:
        for key in keys:
            c.execute(q("procedure_lock"), {"lock_key": f"{ds}:procedure:{key}"})
        c.execute(q("procedure_settle"), {"dataset_id": ds, "keys": keys, "ids": ids})

    return settle


def restore_current(conn: Connection, dataset_id: uuid.UUID) -> int:
    """After a forget: versions nothing supersedes any more are current again."""
    return len(conn.execute(q("procedure_restore_current"), {"dataset_id": dataset_id}).all())


__all__ = ["restore_current", "version_procedures"]
