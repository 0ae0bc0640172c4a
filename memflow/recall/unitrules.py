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
from functools import lru_cache

from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import is_cjk_text
from memflow.text.terms import STEM_LENGTH, content_terms, mentions

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

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


# Small talk: a line that opens with a greeting, thanks or a farewell and says nothing more than
# that, an addressee, a phatic phrase and at most one topic word ("Hi Alex, quick update on
# Northwind.", "Thanks, that helps!", "大家好，同步一下进展"). It never carries the answer.
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|yo|dear|good (?:morning|afternoon|evening|night)|morning|"
    r"thanks|thank you|thx|cheers|bye|goodbye|see you|see ya|take care|congrats|"
    r"你好|您好|大家好|嗨|哈喽|早上好|早|晚上好|谢谢|多谢|感谢|再见|拜拜)"
    r"(?![A-Za-z])[\s,，!！.。:：~]*(?:(?:[A-Z][\w'-]*|all|everyone|team|guys|folks)"
    r"(?![\w'-])[\s,，!！.。:：~]*)?",
    re.IGNORECASE,
)
_PHATIC = frozenset(
    (
        "quick update news just check checking in touch base hope well good great nice glad "
        "happy see you again long time soon later bye day week weekend morning afternoon "
        "evening night all everyone team how going doing things thanks thank much lot so very "
        "really helpful help sorry late back catch up chat talk let know here ok okay sure "
        "cool awesome love hear today tomorrow quickly one more thing about on regarding re "
        "update updates following follow"
    ).split()
)
_PHATIC_TERMS = frozenset(w[:STEM_LENGTH] for w in _PHATIC)
_PHATIC_ZH = re.compile(
    r"同步一下|同步|一下|进展|更新|最新|情况|最近|好久不见|辛苦了|辛苦|大家|收到|好的|哈哈|的"
)
_DIGIT = re.compile(r"\d")


def is_small_talk(text: str) -> bool:
    """Whether ``text`` (a unit's body, without its speaker) is small talk: a greeting, thanks or
    farewell first, no figure, and after it at most one word that is not phatic (a topic
    named in passing), or at most four Chinese characters and one Latin word."""
    m = _GREETING.match(text)
    if m is None or _DIGIT.search(text):
        return False
    rest = text[m.end() :]
    if _CJK.search(rest):
        return (
            len(_CJK.findall(_PHATIC_ZH.sub("", rest))) <= 4 and len(_LATIN_WORD.findall(rest)) <= 1
        )
    return len(content_terms(rest) - _PHATIC_TERMS) <= 1


@lru_cache(maxsize=16384)  # (the same units' texts, search after search)
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


__all__ = ["QueryRules", "body_of", "is_decision", "is_small_talk", "title_matches"]
