"""Rule-based entity types: the classification labels a text states about an entity ("Acme is
our customer", "supplier Norbright", "供应商恒远"). Conservative: only the business roles below,
only next to a name the extractor already found; anything else stays untyped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from memflow.context import StoreContext
from memflow.db.steps import Op, sql_tx
from memflow.drafts import EntityDraft, EpisodeDraft
from memflow.ids import canonical_name
from memflow.store import reads
from memflow.text.document import Chunk

# label as written -> the type name stored (one EntityType per name)
_LABELS: dict[str, str] = {
    "customer": "customer", "customers": "customer", "client": "customer", "clients": "customer",
    "supplier": "supplier", "suppliers": "supplier", "vendor": "supplier", "vendors": "supplier",
    "partner": "partner", "partners": "partner",
    "contractor": "contractor", "contractors": "contractor",
    "competitor": "competitor", "competitors": "competitor",
    "客户": "customer", "供应商": "supplier", "厂商": "supplier", "合作伙伴": "partner",
    "承包商": "contractor", "竞争对手": "competitor",
}  # fmt: skip
_EN = "|".join(sorted((k for k in _LABELS if k.isascii()), key=len, reverse=True))
_ZH = "|".join(sorted((k for k in _LABELS if not k.isascii()), key=len, reverse=True))


def _patterns(name: str) -> list[re.Pattern[str]]:
    n = re.escape(name)
    return [
        # "Acme is our customer", "Acme, a supplier of ...", "Acme (vendor)"
        re.compile(
            rf"(?<!\w){n}(?:\s*,\s*|\s+(?:is|was|are|became)\s+|\s*\(\s*)"
            rf"(?:(?:our|a|an|the|one\s+of\s+our|a\s+new|our\s+new)\s+)?(?:main\s+|key\s+|new\s+)?"
            rf"({_EN})\b",
            re.IGNORECASE,
        ),
        # "our customer Acme", "supplier: Acme", "the vendor Acme"
        re.compile(rf"\b({_EN})\s*(?::\s*|\s+){n}(?!\w)", re.IGNORECASE),
        # "供应商恒远", "客户：蓝鲸科技", "恒远是我们的供应商"
        re.compile(rf"({_ZH})\s*[:：]?\s*{n}"),
        re.compile(rf"{n}\s*(?:是|为)(?:我们的|我们|公司的|一家|新的)?\s*({_ZH})"),
    ]


def entity_labels(text: str, names: Iterable[str]) -> dict[str, list[str]]:
    """The type names ``text`` states for each of ``names`` (only names with one)."""
    out: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        if len(name) < 2 or name not in text:
            continue
        found = [
            _LABELS[m.group(1).lower() if m.group(1).isascii() else m.group(1)]
            for p in _patterns(name)
            for m in p.finditer(text)
        ]
        if found:
            out[name] = list(dict.fromkeys(found))
    return out


def with_entity_types(episode: EpisodeDraft, chunks: list[Chunk]) -> EpisodeDraft:
    """The episode with the types its text states for its entities ("Acme is our customer")."""
    names = [e.name for e in episode.entities] + [
        e.name for f in episode.facets for e in f.entities
    ]
    labels = entity_labels(" ".join(c.text for c in chunks), names)
    if not labels:
        return episode

    def typed(ents: list[EntityDraft]) -> list[EntityDraft]:
        return [e.model_copy(update={"types": labels.get(e.name, [])}) for e in ents]

    facets = [f.model_copy(update={"entities": typed(f.entities)}) for f in episode.facets]
    return episode.model_copy(update={"entities": typed(episode.entities), "facets": facets})


def type_name(label: str) -> str:
    """The stored type name of a label as a query may write it ("customers" -> "customer")."""
    text = label.strip()
    return _LABELS.get(text.lower() if text.isascii() else text, text)


def entities_of_type_op(
    ctx: StoreContext, label: str, *, max_distance: float, limit: int
) -> Op[list[dict[str, Any]]]:
    """Entities whose type is ``label`` or embeds within ``max_distance`` of it: the label
    embedded (CPU), then one read (:func:`memflow.store.reads.entities_of_type`)."""
    params = {
        "dataset_id": ctx.dataset_id,
        "q": ctx.embedder.embed_query(label),
        "key": canonical_name(type_name(label)),
        "max_distance": max_distance,
        "limit": limit,
    }
    found: list[dict[str, Any]] = yield sql_tx(
        lambda conn: reads.entities_of_type(conn, params), ctx.dataset_id, read=True
    )
    return found


__all__ = ["entities_of_type_op", "entity_labels", "type_name", "with_entity_types"]
