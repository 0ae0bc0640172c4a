"""Query-aware rules for ranking evidence units, no model involved.

Three adjustments to a FacetPoint's cost (a distance: smaller is better):

- **speaker**: when the query names a speaker of the conversation, turns of the *other*
  speakers are pushed back (+``speaker_penalty``): they mention the name as a vocative ("Thanks,
  Ada!") far more often than they carry that person's facts;
- **shared terms**: each query content term the unit shares (:mod:`memflow.recall.terms`: stemmed
  words, CJK bigrams; stop words and speaker names excluded) pulls it forward
  (-``term_overlap_bonus``, at most ``term_overlap_cap`` terms);
- **question turns**: a turn that only asks a question is pushed back (+``question_turn_penalty``);
- **decisions and owners** (evidence units only, :mod:`memflow.recall.render`): a statement that
  records a decision or who owns the work (:func:`is_decision`: "Decision: …", "… owns …",
  "决定…", "负责人：…") pulls forward (-``decision_bonus``): it is the evidence a question about a
  piece of work usually wants; it does not choose the episode.

And one rule for facets (:func:`title_matches`): a facet whose title names the aspect the query
asks about ("约束" in "有哪些约束？", "Risks" in "what are the risks?") pulls its whole chain
forward (-``facet_title_bonus``), so the section the question names wins over a near neighbour.

Speakers come from the parsed structure (the ``speaker`` of the chunk a point was extracted from:
conversation JSON, or "Name: text" dialog lines the parser recognised), in any script. Units
without a speaker (document sentences) get only the shared-terms rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import is_cjk_text
from memflow.text.terms import content_terms, mentions

# Decision and ownership markers, English and Chinese: a labelled line ("Decision:", "Owner:",
# "决定：") or a phrase that says who decided or owns what. Labels are matched at the start of a
# line only, phrases anywhere.
_DECISION_LABEL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:decisions?|decided|resolution|owners?|assignees?|action items?"
    r"|决定|决策|决议|结论|负责人|责任人)\s*[:：]",
    re.IGNORECASE,
)
_DECISION_PHRASE = re.compile(
    r"\b(?:owns|is responsible for|are responsible for|we (?:decided|agreed|adopt(?:ed)?|chose))\b"
    r"|决定|决策|决议|负责|拍板|定下",
    re.IGNORECASE,
)


def is_decision(text: str) -> bool:
    """Whether ``text`` records a decision or an owner (a labelled line or a phrase)."""
    return bool(_DECISION_LABEL.search(text) or _DECISION_PHRASE.search(text))


def title_matches(query_terms: frozenset[str], title: str) -> bool:
    """Whether a facet title names an aspect the query asks about: every content term of the
    title (stemmed words, CJK bigrams; at least one) is a term of the query. A one-word heading
    ("约束", "Risks") matches a query that uses it; a keyword list ("Lisbon, hotel, rooms")
    matches only a query that uses all of it."""
    terms = content_terms(title)
    return bool(terms) and terms <= query_terms


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
    def build(
        cls, query: str, speakers: Iterable[str | None], texts: Iterable[str] = ()
    ) -> QueryRules:
        """The rules of ``query`` over units of these ``speakers``. When the units' ``texts``
        are in two scripts (CJK and another), shared terms count for nothing: words are shared
        within one language only, so they would pull the query's own language forward, not the
        answer (a bilingual store; a store of one script keeps the rule)."""
        known = sorted({s for s in speakers if s})
        named = frozenset(s for s in known if mentions(query, s))
        scripts = {is_cjk_text(t) for t in texts}
        terms = frozenset() if len(scripts) > 1 else content_terms(query, known)
        return cls(named, terms)

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


__all__ = ["QueryRules", "body_of", "is_decision", "title_matches"]
