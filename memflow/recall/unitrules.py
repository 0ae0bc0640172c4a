"""Query-aware rules for ranking evidence units, no model involved.

Three adjustments to a FacetPoint's cost (a distance: smaller is better):

- **speaker**: when the query names a speaker of the conversation, turns of the *other*
  speakers are pushed back (+``speaker_penalty``): they mention the name as a vocative ("Thanks,
  Ada!") far more often than they carry that person's facts;
- **shared terms**: each query content term the unit shares (:mod:`memflow.recall.terms`: stemmed
  words, CJK bigrams; stop words and speaker names excluded) pulls it forward
  (-``term_overlap_bonus``, at most ``term_overlap_cap`` terms);
- **question turns**: a turn that only asks a question is pushed back (+``question_turn_penalty``).

Speakers come from the parsed structure (the ``speaker`` of the chunk a point was extracted from:
conversation JSON, or "Name: text" dialog lines the parser recognised), in any script. Units
without a speaker (document sentences) get only the shared-terms rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memflow.recall.config import RecallConfig
from memflow.text.terms import content_terms, mentions


def body_of(text: str, speaker: str | None) -> str:
    """The unit's text without the ``"Speaker: "`` prefix conversation turns are stored with."""
    if speaker and text.startswith(speaker):
        rest = text[len(speaker) :]
        for sep in (":", "："):
            if rest.startswith(sep):
                return rest[len(sep) :].lstrip()
    return text


@dataclass(frozen=True, slots=True)
class QueryRules:
    named: frozenset[str]  # speakers the query names
    terms: frozenset[str]  # content terms of the query, speakers' names excluded

    @classmethod
    def build(cls, query: str, speakers: Iterable[str | None]) -> QueryRules:
        known = sorted({s for s in speakers if s})
        named = frozenset(s for s in known if mentions(query, s))
        return cls(named, content_terms(query, known))

    def adjustment(self, text: str, speaker: str | None, config: RecallConfig) -> float:
        body = body_of(text, speaker)
        out = 0.0
        if self.terms and config.term_overlap_bonus:
            shared = len(self.terms & content_terms(body))
            out -= config.term_overlap_bonus * min(shared, config.term_overlap_cap)
        if speaker is None:
            return out
        if self.named and speaker not in self.named:
            out += config.speaker_penalty
        if body.rstrip().endswith(("?", "？")):
            out += config.question_turn_penalty
        return out


__all__ = ["QueryRules", "body_of"]
