"""Pure: values no form marks (issue 26). :mod:`memflow.text.values` finds a value by its form
(a date, an amount, a capitalised name); a product or a setting written in lower case ("we are
on sqlite", "the default is now gzip") has none. Two readings find it anyway:

- :func:`slot_terms`: the word that stands where a value is stated, right after a copula, a
  preposition, "use" or a change word ("on sqlite", "reports to glitchtip now", "is now gzip"),
  with no typed value there;
- :func:`aligned_words`: two statements that are one statement but for one short span of words
  (the change words of the newer left aside): the spans are the two values, whatever they are
  ("The default codec is zstd" / "The default codec is now gzip"). A value slot is what differs
  between two statements of one thing, not a listed kind.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from memflow.text.revision import content_keys
from memflow.text.values import Value, is_zh, masked, values

# Words after which a value stands (a copula, a preposition, use, a change word).
_SLOT = frozenset(
    """is are was were be been am now to at on in via use uses using used run runs running
    adopt adopted became become becomes remains stays onto into with by through""".split()
)
_SKIP = frozenset("the a an our my your their his her its this that these those".split())
# Words that are not values of anything (function words, time words, change words).
_NOT_TERM = frozenset(
    """the a an and or but of in on at to for with from by about as is are was were be been being
    am it its this that these those there here i we you he she they me us him her them my our your
    his their have has had do does did so very really just still also too all some any every
    everything everyone what which who whom when where how than then into over after before up
    down out off more most much many one ones get got go going gone went make made can will would
    should could may might now nowadays longer instead anymore again back new same other each
    month week year day days today tomorrow yesterday time times thing things lot bit since
    not no yes sure ok okay usual rn asap fyi btw please thanks""".split()
)
_CHANGE = frozenset(
    """now nowadays instead anymore switched switch moved move migrated migrate changed change
    replaced replace updated moving switching""".split()
)
_NOT_TERM |= _CHANGE | _SLOT
_WORD = re.compile(r"[a-z0-9][a-z0-9'’._+#/-]*[a-z0-9+#]|[a-z0-9]", re.IGNORECASE)
SPAN_MAX = 3  # words of the span that differs between two aligned statements
SHARED_MIN = 3  # words the two aligned statements share besides it (one a content word)
# A statement with at most this many content words (Chinese character pairs) besides its values
# is a template ("Owner: X", "负责人：X"; "Release captain: X" is one too): chosen on the tune
# halves of the hand-written sets (an unrelated note's "Owner:" line was read as a restatement).
TEMPLATE_KEYS = 2


def _term(word: str) -> bool:
    """A word that may be a value: not a function word, a number, or a participle or adverb
    (a state said of something, "is pinned", "runs nightly": not a name)."""
    low = word.lower()
    return (
        len(low) >= 3
        and low not in _NOT_TERM
        and not low.isdigit()
        and not low.endswith(("ed", "ing", "ly"))
    )


@lru_cache(maxsize=8192)
def _slot_terms(text: str) -> tuple[Value, ...]:
    if is_zh(text):
        return ()
    typed = values(text)
    out: list[Value] = []
    tokens = list(_WORD.finditer(text))
    for i, m in enumerate(tokens[1:], start=1):
        j = i - 1
        while j > 0 and tokens[j].group(0).lower() in _SKIP:
            j -= 1
        before = tokens[j].group(0).lower()
        gap = text[tokens[j].end() : m.start()]
        if before not in _SLOT or re.search(r"[.;!?,:()]", gap):
            continue
        word = m.group(0)
        if not _term(word) or any(v.start < m.end() and m.start() < v.end for v in typed):
            continue
        out.append(Value("name:term", word.lower(), word, m.start(), m.end()))
    return tuple(out)


def slot_terms(text: str) -> list[Value]:
    """The English words of ``text`` that stand where a value is stated and that no typed value
    covers (kind ``name:term``; see the module docstring)."""
    return list(_slot_terms(text))


def template(text: str, keys_max: int) -> bool:
    """A statement that says little besides its values ("Owner: X", "负责人：X"): at most
    ``keys_max`` content words (Chinese character pairs) besides them. What it is about is in
    its document, not in it."""
    rest, at = [], 0
    for v in values(text):
        rest.append(text[at : v.start])
        at = v.end
    rest.append(text[at:])
    return len(content_keys(" ".join(rest), [])) <= keys_max


def same_topic(
    a: str, b: str, about_a: str, about_b: str, keys_max: int, *, clauses: bool = False
) -> bool:
    """Whether two statements may speak of one thing: yes unless they are one template with two
    values ("Owner: X" / "Owner: Y": their masked forms the same, :func:`template`) and what
    each is about (its document's title, its episode's name) shares no content word with the
    other's (unknown: yes). ``clauses``: a clause of each that is one template is enough
    ("总额 35万，负责人：何佳。" / "负责人：孙倩。": two notes' owners, not one fact)."""
    if not (about_a and about_b):
        return True
    if clauses:
        shared = _template_clauses(a, keys_max) & _template_clauses(b, keys_max)
    else:
        shared = {_form(a)} if template(a, keys_max) and _form(a) == _form(b) else set()
    if not shared:
        return True
    return bool(content_keys(about_a, []) & content_keys(about_b, []))


def _form(text: str) -> str:
    return " ".join(masked(text).lower().split())


# clauses: at Chinese punctuation or a middle dot, at a comma but between digits, at a full stop
# before a space or the end ("12,000" and "v1.2" stay whole; texts may come NFKC-folded)
_CLAUSE = re.compile(r"[，；。！？·|;!?]|,(?!\d)|\.(?:\s|$)")


def _template_clauses(text: str, keys_max: int) -> set[str]:
    """The masked forms of the clauses of ``text`` that are templates."""
    return {
        _form(c) for c in _CLAUSE.split(text) if c.strip() and values(c) and template(c, keys_max)
    }


def _tokens(text: str, drop_change: bool) -> list[str]:
    out = [w.lower() for w in _WORD.findall(text)]
    return [w for w in out if not (drop_change and w in _CHANGE)]


@lru_cache(maxsize=8192)
def aligned_words(new: str, old: str) -> tuple[str, str] | None:
    """``(old span, new span)`` when two English statements are one statement but for one span
    of at most ``SPAN_MAX`` words each (the newer's change words left aside: "now", "switched"),
    every word of both spans a content word, the rest shared (at least ``SHARED_MIN`` words, one of them a
    content word, so that it says what the value is of); None otherwise."""
    if is_zh(new) or is_zh(old):
        return None
    a, b = _tokens(old, False), _tokens(new, True)
    if a == b:
        return None
    ops = [
        op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    was, now = a[i1:i2], b[j1:j2]
    if len(was) > SPAN_MAX or len(now) > SPAN_MAX:
        return None
    if not all(_term(w) for w in was) or not all(_term(w) for w in now):
        return None  # "so cool", "and keep going": not a value
    rest = a[:i1] + a[i2:]
    if len(rest) < SHARED_MIN or not any(_term(w) for w in rest):
        return None
    # The newer span stands where a value is stated: after a slot word, or closing the
    # statement ("Owner: X"); not in front of a noun ("the design review" / "the code review").
    k = j1 - 1
    while k >= 0 and b[k] in _SKIP:
        k -= 1
    if not (j2 == len(b) or (k >= 0 and b[k] in _SLOT)):
        return None
    return " ".join(was), " ".join(now)


__all__ = [
    "SHARED_MIN",
    "SPAN_MAX",
    "TEMPLATE_KEYS",
    "aligned_words",
    "same_topic",
    "slot_terms",
    "template",
]
