"""Query-aware rules for ranking evidence units (``highly_related``), no model involved.

Three adjustments to a FacetPoint unit's rank (a distance: smaller is better), measured on the
1,536 LoCoMo questions (docs/benchmarks/locomo.md):

- **speaker**: when the query names a speaker of the conversation ("What does Melanie paint?"),
  turns of the *other* speakers are pushed back (+``speaker_penalty``): they mention the name as a
  vocative ("Thanks, Melanie!") far more often than they carry that person's facts;
- **shared terms**: each query content word the unit shares (stemmed to 5 letters, stop words and
  speaker names excluded) pulls it forward (-``term_overlap_bonus``, at most ``term_overlap_cap``
  words): this separates factual turns from small talk that embeds close to a name-heavy query;
- **question turns**: a turn that only asks a question is pushed back (+``question_turn_penalty``).

Speakers come from the ``"Speaker: text"`` form conversation turns are stored in; units without
it are never treated as another speaker's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import EN_QUESTION_WORDS

STOP_WORDS = EN_QUESTION_WORDS | frozenset(
    "i me my you your he she his her they them their we our it its of to in on at for with and "
    "or but about from by as that this these those some any there here up out so just not no "
    "yes really very".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
_SPEAKER = re.compile(r"^([A-Z][\w\-']*):\s")


def stem(word: str) -> str:
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    return w[:5]


def split_speaker(text: str) -> tuple[str | None, str]:
    """(speaker, body) of a ``"Speaker: text"`` turn; (None, text) otherwise."""
    m = _SPEAKER.match(text)
    return (m.group(1), text[m.end() :]) if m else (None, text)


def content_terms(text: str, exclude: Iterable[str] = ()) -> frozenset[str]:
    skip = set(exclude)
    return frozenset(
        stem(w) for w in _WORD.findall(text) if w.lower() not in STOP_WORDS and w not in skip
    )


@dataclass(frozen=True, slots=True)
class QueryRules:
    named: frozenset[str]  # speakers the query names
    terms: frozenset[str]  # stemmed content words of the query, speaker names excluded

    @classmethod
    def build(cls, query: str, unit_texts: Iterable[str]) -> QueryRules:
        speakers = {s for s in (split_speaker(t)[0] for t in unit_texts) if s}
        named = frozenset(s for s in speakers if re.search(rf"\b{re.escape(s)}\b", query))
        terms = content_terms(query, speakers) - {stem(s) for s in speakers}
        return cls(named, terms)

    def adjustment(self, text: str, config: RecallConfig) -> float:
        speaker, body = split_speaker(text)
        out = 0.0
        if self.named and speaker is not None and speaker not in self.named:
            out += config.speaker_penalty
        if self.terms and config.term_overlap_bonus:
            shared = len(self.terms & content_terms(body))
            out -= config.term_overlap_bonus * min(shared, config.term_overlap_cap)
        if body.rstrip().endswith(("?", "？")):
            out += config.question_turn_penalty
        return out
