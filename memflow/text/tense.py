"""Which time a question asks about: the past ("where did I live before…", "以前…") or the
present ("where do I live now?", "现在…"). Only explicit words count: a question without one
(or with both) asks about neither, and ranking leaves time alone."""

from __future__ import annotations

import re

_PAST = re.compile(
    r"\b(?:before|used to|previous(?:ly)?|formerly|originally|at first|in the past|"
    r"no longer|any more|anymore|back then|old)\b|以前|之前|原来|过去|曾经|先前|当初|从前",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    r"\b(?:now|currently|these days|nowadays|at the moment|at present|presently)\b"
    r"|现在|目前|如今|眼下|这些天|此刻",
    re.IGNORECASE,
)


def asks_about_the_past(query: str) -> bool:
    return bool(_PAST.search(query))


def asks_about_the_present(query: str) -> bool:
    """The query names the present and not the past."""
    return bool(_PRESENT.search(query)) and not asks_about_the_past(query)


__all__ = ["asks_about_the_past", "asks_about_the_present"]
