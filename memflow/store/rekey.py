"""Ids for a dataset imported under another name (another dataset id).

memflow derives its ids from the dataset's id and the content (:func:`memflow.ids.make_id`): the
same entity, document or statement written again gets the same id, which is how a later write
finds what is stored (a document already memorised, an entity's node). A dataset imported under a
new name must have the ids that dataset would have derived, or its next memorize would duplicate
documents and break on entities. So each id whose recipe reproduces it from the dump's dataset
id is derived again from the new one, parents first (a facet's id depends on its episode's);
an id no recipe reproduces (random ids, content merged since) stays as it is, which cannot
collide in a new dataset. The pairs go into the import's ``import_map`` (sql/export.sql), which
every write of the import reads through ``pg_temp.import_id``.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from memflow.db.filters import tags_json
from memflow.db.steps import Body
from memflow.ids import make_id, normalise_text
from memflow.store.dump import Clock
from memflow.store.export import fetch_rows, statement

Parts = tuple[str | uuid.UUID | None, ...]
# Candidate recipes of one row: (parts with the dump's ids, the same parts with the new ids).
Candidates = Iterator[tuple[Parts, Parts]]
Recipe = Callable[[Any], Candidates]
_MAX_PERMUTED = 5  # a procedure's context points are tried in every order up to this many


def _same(*parts: str | uuid.UUID | None) -> Candidates:
    yield parts, parts


def document(row: Any) -> Candidates:
    """memflow.store.writer.document_id."""
    if row.scope or row.metadata:
        yield from _same("document", row.content_hash, tags_json(row.scope, row.metadata))
    else:
        yield from _same("document", row.content_hash)


def chunk(row: Any) -> Candidates:
    yield ("chunk", row.document_id, str(row.idx)), ("chunk", row.document_new, str(row.idx))


def root(row: Any) -> Candidates:
    """Episodes (memflow.store.plan.episode_id: the summary as first written), Entities and
    EntityTypes (their canonical names)."""
    if row.kind == "Episode":
        for summary in dict.fromkeys(s for s in (row.summary, row.base_text) if s is not None):
            yield from _same("Episode", normalise_text(row.name), normalise_text(summary))
    elif row.canonical_name is not None:
        yield from _same(row.kind, row.canonical_name)


def procedure(row: Any) -> Candidates:
    """memflow.store.plan.procedure_id: the draft's summary is the stored one, or empty (then
    the stored summary was derived); the context points' order is not stored, so each order is
    tried while there are few."""
    contexts = list(row.context)
    orders = (
        itertools.permutations(contexts) if len(contexts) <= _MAX_PERMUTED else iter([contexts])
    )
    for context in orders:
        for summary in (row.summary or "", ""):
            content = [row.name, summary, *row.steps, *context]
            yield from _same("Procedure", row.canonical_name, *map(normalise_text, content))


def child(kind: str) -> Recipe:
    """Facets, FacetPoints, procedure steps and context points: under one of their parents."""

    def recipe(row: Any) -> Candidates:
        text = normalise_text(row.search_text or "")
        extra: Parts = ()
        if kind == "ProcedureStepPoint":
            extra = (str(row.position),)
        elif kind == "ProcedureContextPoint":
            extra = (row.aspect,)
        for old, new in zip(row.parents, row.parents_new, strict=True):
            yield (kind, old, *extra, text), (kind, new, *extra, text)

    return recipe


def edge(row: Any) -> Candidates:
    rel = row.relationship
    yield ("edge", row.src, rel, row.dst), ("edge", row.src_new, rel, row.dst_new)


# (statement, its parameters, recipe) in dependency order.
PASSES: tuple[tuple[str, dict[str, str], Recipe], ...] = (
    ("rekey_documents", {}, document),
    ("rekey_chunks", {}, chunk),
    ("rekey_roots", {}, root),
    ("rekey_procedures", {}, procedure),
    ("rekey_children", {"kind": "Facet", "relationship": "has_facet"}, child("Facet")),
    ("rekey_children", {"kind": "FacetPoint", "relationship": "has_point"}, child("FacetPoint")),
    (
        "rekey_children",
        {"kind": "ProcedureStepPoint", "relationship": "has_key_point"},
        child("ProcedureStepPoint"),
    ),
    (
        "rekey_children",
        {"kind": "ProcedureContextPoint", "relationship": "has_context_point"},
        child("ProcedureContextPoint"),
    ),
    ("rekey_edges", {}, edge),
)


def derive(row: Any, recipe: Recipe, source: uuid.UUID, target: uuid.UUID) -> uuid.UUID | None:
    """The row's id in ``target`` when a candidate of ``recipe`` reproduces it in ``source``."""
    for old, new in recipe(row):
        if make_id(source, *old) == row.id:  # type: ignore[arg-type]
            return make_id(target, *new)  # type: ignore[arg-type]
    return None


def rekey_body(source: uuid.UUID, target: uuid.UUID, clock: Clock) -> Body[int]:
    """Fill ``import_map`` for the staged dump; returns how many ids changed."""
    changed = 0
    clock.emit("rekey", 0, len(PASSES))
    for number, (name, params, recipe) in enumerate(PASSES, start=1):
        yield statement(name, params)
        while rows := (yield fetch_rows):
            pairs = [
                {"old": str(r.id), "new": str(new)}
                for r in rows
                if (new := derive(r, recipe, source, target)) is not None
            ]
            if pairs:
                yield statement("rekey_insert", {"pairs": json.dumps(pairs)})
            changed += len(pairs)
        yield statement("dump_close")
        clock.emit("rekey", number, len(PASSES), f"{changed} ids re-derived")
    return changed


__all__ = ["PASSES", "derive", "rekey_body"]
