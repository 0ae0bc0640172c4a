"""Which time a question asks about: the past ("where did I live before…", "以前…") or the
present ("where do I live now?", "现在…"). :func:`asks_about_the_past` and
:func:`asks_about_the_present` read explicit words only. :func:`asks_in_the_past` also reads
the past tense ("when did …", "what was …", "…了吗"), and a question in neither tense asks about
the present (issue 26: "Which broker do we use?" wants today's answer)."""

from __future__ import annotations

import re

_PAST = re.compile(
    r"\b(?:before|used to|previous(?:ly)?|formerly|originally|at first|in the past|"
    r"no longer|any more|anymore|back then)\b|以前|之前|原来|过去|曾经|先前|当初|从前",
    re.IGNORECASE,
)
# "old" names the past ("my old address?") unless the question names the present: "where do I
# currently keep my old sneakers?" asks about now (the word describes the sneakers).
_OLD = re.compile(r"\bold\b", re.IGNORECASE)
_PRESENT = re.compile(
    r"\b(?:now|currently|these days|nowadays|at the moment|at present|presently)\b"
    r"|现在|目前|如今|眼下|这些天|此刻",
    re.IGNORECASE,
)


# The past tense of a question: auxiliaries and times that place it before now.
_PAST_TENSE = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|used to|ago|yesterday|last (?:week|"
    r"month|year|time|night|weekend)|back when|once)\b|去过|做过|用过|说过|过吗|了吗|那时|当时|昨天|"
    r"上周|上个月|去年(?![检审])",
    re.IGNORECASE,
)


def asks_in_the_past(query: str) -> bool:
    """The question names the past or is put in the past tense."""
    return asks_about_the_past(query) or bool(_PAST_TENSE.search(query))


def asks_about_the_past(query: str) -> bool:
    return bool(_PAST.search(query)) or (bool(_OLD.search(query)) and not _PRESENT.search(query))


def asks_about_the_present(query: str) -> bool:
    """The query names the present and not the past."""
    return bool(_PRESENT.search(query)) and not asks_about_the_past(query)


__all__ = ["asks_about_the_past", "asks_about_the_present", "asks_in_the_past"]
