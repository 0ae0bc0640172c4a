"""How ``memorize`` reads and stores its inputs: the one place its defaults live.

``Dataset.memorize``, :mod:`memflow.ingest.pipeline` and ``memflow memorize`` all take their
defaults from :class:`MemorizeOptions`; a keyword left as None means "from the options".
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Literal, get_args

from memflow.ingest.route import RouteSettings
from memflow.store.conflicts import ConflictSettings
from memflow.text.document import ContentType

ExtractorChoice = Literal["auto", "rules", "llm"]
ContentTypeChoice = Literal["auto", ContentType]
EXTRACTOR_CHOICES: tuple[ExtractorChoice, ...] = get_args(ExtractorChoice)
CONTENT_TYPE_CHOICES: tuple[str, ...] = get_args(ContentTypeChoice)


@dataclass(frozen=True)
class MemorizeOptions:
    """``content_type``: one of CONTENT_TYPE_CHOICES ("auto" detects it per input).
    ``extractor``: "auto" (the LLM when one is configured, else rules), "rules", "llm", or an
    object with ``extract(document)``. ``reference_time`` anchors relative dates (default: a
    file's modification time, a conversation's session dates, else now). ``routing``: merge new
    episodes into existing ones (None: for texts, not for dialog sessions; or RouteSettings).
    ``raise_on_error``: raise the first error when every input failed (else only report it).
    ``supersede``: how a new fact closes the stored one it replaces (memflow.store.temporal):
    "rules" (no model), "llm" (the chat model decides for close candidates, then the rules),
    "off", or a configured :class:`memflow.llm.supersede.LlmSuperseder`. ``conflicts``: the
    similarity path's constants (:class:`memflow.store.conflicts.ConflictSettings`): a new fact
    that gives another value for what a stored one states closes it, or marks it possibly
    outdated, by the meaning of the two statements with their values masked.
    ``scope`` ({"user", "agent", "session"}: any subset, non-empty strings) and ``metadata`` (a
    JSON object): stored on each document; ``search(scope=..., where=...)`` filters on them.
    ``derived_vectors``: the edge texts of the rules extractor's drafts, which only restate their
    ends, get the normalised mean of their ends' vectors instead of an embedding of their own,
    and so does an episode's summary, from its facets' anchors (:class:`memflow.store.plan.Planner`;
    fewer texts for the model, measured in docs/benchmarks/ingest.md). Drafts from a model or
    given as drafts keep their own."""

    content_type: str = "auto"
    extractor: ExtractorChoice | Any = "auto"
    reference_time: datetime | None = None
    routing: RouteSettings | bool | None = None
    raise_on_error: bool = True
    supersede: str | Any = "rules"
    # Revision 0006: stored on every document written (memflow.db.filters checks them).
    scope: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    derived_vectors: bool = True
    conflicts: ConflictSettings = field(default_factory=ConflictSettings)

    def updated(self, **given: Any) -> MemorizeOptions:
        """These options with the ``given`` values that are not None."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"unknown memorize option {unknown[0]!r}")
        return replace(self, **{k: v for k, v in given.items() if v is not None})


__all__ = [
    "CONTENT_TYPE_CHOICES",
    "EXTRACTOR_CHOICES",
    "ContentTypeChoice",
    "ExtractorChoice",
    "MemorizeOptions",
]
