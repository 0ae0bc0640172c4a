"""Text structure: paragraphs, Markdown sections and sentences (Chinese and English).

CJK sentences end at ``。！？；…`` (plus closing quotes/brackets); English sentences end at
``.!?`` followed by whitespace, unless the word before the period is a known abbreviation,
an initial, or the next character is lowercase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Common English abbreviations that end with a period but rarely end a sentence.
ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "approx",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
        "fig",
        "no",
        "nos",
        "vol",
        "p",
        "pp",
        "ca",
        "al",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "a.m",
        "p.m",
        "u.s",
        "u.k",
        "e.u",
        "ph.d",
        "b.sc",
        "m.sc",
        "gen",
        "gov",
        "sen",
        "rep",
        "rev",
        "min",
        "max",
        "avg",
        "ref",
        "ver",
        "v",
        "ave",
        "blvd",
        "rd",
    }
)

_CJK_END = "。！？；…"
_CLOSERS = "\"'”’」』）)]】》"
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_CJK_BOUNDARY = re.compile(rf"[{_CJK_END}]+[{re.escape(_CLOSERS)}]*")
_LATIN_BOUNDARY = re.compile(rf"[.!?]+[{re.escape(_CLOSERS)}]*(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S")
# How far back from a period the word before it is read: far longer than any abbreviation, so a
# word that fills the whole window is none. Reading a bounded window (not the whole
# text before the period) keeps splitting linear in the length of a paragraph.
_WORD_WINDOW = 32


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the period at ``dot`` closes an abbreviation or an initial, not a sentence."""
    start = max(0, dot - _WORD_WINDOW)
    match = _WORD_BEFORE.search(text, start, dot)
    if match is None or (match.start() == start and start > 0):
        return False  # no word, or one longer than the window: no abbreviation is that long
    word = match.group(1)
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. Smith"
    return word.casefold().rstrip(".") in ABBREVIATIONS


def _boundaries(text: str) -> list[int]:
    ends: list[int] = [m.end() for m in _CJK_BOUNDARY.finditer(text)]
    for match in _LATIN_BOUNDARY.finditer(text):
        end = match.end()
        punct = match.group(0)
        following = _NON_WS.search(text, end)
        if following is None:
            continue
        nxt = following.group(0)
        if nxt.islower():
            continue
        if (
            punct.startswith(".")
            and punct.rstrip(_CLOSERS) == "."
            and _is_abbreviation(text, match.start())
        ):
            continue
        ends.append(end)
    return sorted(set(ends))


def split_sentences(text: str) -> list[str]:
    """Split one paragraph into sentences; whitespace is collapsed, empty pieces dropped."""
    text = _WS.sub(" ", text).strip()
    if not text:
        return []
    out: list[str] = []
    start = 0
    for end in _boundaries(text):
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def shorten(text: str, limit: int) -> str:
    """Shorten to at most ``limit`` characters, at a word boundary for Latin text, with '…'."""
    text = _WS.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    if not has_cjk(cut[-12:]):
        space = cut.rfind(" ")
        if space >= limit // 2:
            cut = cut[:space]
    return cut.rstrip(" ,;:，；：、") + "…"


def join_statements(parts: list[str]) -> str:
    """Join sentences: no separator between CJK neighbours, one space otherwise."""
    out = ""
    for part in parts:
        if out and not (has_cjk(out[-1]) and has_cjk(part[:1])):
            out += " "
        out += part
    return out


_FENCE = re.compile(r"^\s*(```|~~~)")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•·]|\d{1,3}[.)、])\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]{0,80}>")
_LINE_END = tuple(".!?。！？；…:：;")


@dataclass(frozen=True)
class Unit:
    """One statement of a text: a sentence, a table row or a code block."""

    text: str
    section: str | None
    paragraph: int


def _clean_inline(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _HTML_TAG.sub(" ", text)


def _join_lines(lines: list[str], short_lines_apart: bool) -> list[str]:
    """Re-join hard-wrapped lines; a line ending in punctuation stays apart, and so does a short
    line (a title-like line of plain text) when ``short_lines_apart``."""
    groups: list[str] = []
    for line in lines:
        prev = groups[-1] if groups else ""
        if prev and not prev.endswith(_LINE_END) and not (short_lines_apart and len(prev) < 40):
            sep = "" if has_cjk(prev[-1]) and has_cjk(line[0]) else " "
            groups[-1] = prev + sep + line
        else:
            groups.append(line)
    return groups


class _Builder:
    def __init__(self, markdown: bool) -> None:
        self.markdown = markdown
        self.units: list[Unit] = []
        self.headings: list[tuple[int, str]] = []
        self.title: str | None = None
        self.has_h1 = False
        self.in_item = False
        self.paragraph = 0
        self.buffer: list[str] = []

    @property
    def section(self) -> str | None:
        return " > ".join(h for _, h in self.headings) or None

    def add(self, text: str) -> None:
        text = text.strip()
        if text:
            self.units.append(Unit(text, self.section, self.paragraph))

    def flush(self, new_paragraph: bool = False) -> None:
        if self.buffer:
            apart = not self.markdown and not self.in_item
            for group in _join_lines(self.buffer, apart):
                cleaned = _clean_inline(group) if self.markdown else group
                for sentence in split_sentences(cleaned):
                    self.add(sentence)
            self.buffer = []
            self.in_item = False
        if new_paragraph:
            self.paragraph += 1

    def heading(self, level: int, text: str) -> None:
        self.flush(new_paragraph=True)
        text = _clean_inline(text).strip()
        if not text:
            return
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        if level == 1 and not self.has_h1:
            self.title, self.has_h1 = text, True
        elif self.title is None:
            self.title = text


def text_units(text: str, *, markdown: bool) -> tuple[list[Unit], str | None]:
    """The statements of a plain-text or Markdown document and its title (first heading).

    Blank lines, headings, rules and code fences end a paragraph; list items and table rows are
    statements of their own; Markdown headings become the ``section`` path ``"A > B"``.
    """
    b = _Builder(markdown)
    lines = text.splitlines()
    i = 0
    if markdown and lines and lines[0].strip() == "---":
        close = next((j for j in range(1, min(len(lines), 60)) if lines[j].strip() == "---"), 0)
        i = close + 1 if close else 0
    columns: list[str] = []  # the header cells of the table being read
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        columns = columns if stripped.startswith("|") else []
        if markdown and (fence := _FENCE.match(line)):
            b.flush(new_paragraph=True)
            end = next(
                (
                    j
                    for j in range(i + 1, len(lines))
                    if lines[j].strip().startswith(fence.group(1))
                ),
                len(lines),
            )
            b.add("\n".join(lines[i + 1 : end]))
            b.paragraph += 1
            i = end + 1
            continue
        if markdown and (atx := _ATX.match(line)):
            b.heading(len(atx.group(1)), atx.group(2))
        elif (
            markdown
            and stripped
            and not b.buffer
            and i + 1 < len(lines)
            and _SETEXT.match(lines[i + 1])
            and not _LIST_ITEM.match(line)
        ):
            b.heading(1 if lines[i + 1].strip().startswith("=") else 2, stripped)
            i += 1
        elif not stripped or _RULE.match(line):
            b.flush(new_paragraph=True)
        elif markdown and stripped.startswith("|"):
            b.flush()
            if not _TABLE_SEP.match(stripped):
                cells = [_clean_inline(c).strip() for c in stripped.strip("|").split("|")]
                if i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
                    columns = cells  # the header row: each row below says its columns
                else:
                    b.add(_row(cells, columns))
            i += 1
            continue
        elif item := _LIST_ITEM.match(line):
            b.flush()
            b.buffer.append(item.group(1).strip())
            b.in_item = True
        else:
            if markdown:
                stripped = stripped.lstrip("> ").strip() if stripped.startswith(">") else stripped
            if stripped:
                b.buffer.append(stripped)
        i += 1
    b.flush()
    return b.units, b.title


def _row(cells: list[str], columns: list[str]) -> str:
    """A table row as one statement, each cell named by its column ("Vendor: Harlowe") when
    the table has a header row of as many cells: a value in a cell is the value of its column."""
    if len(columns) != len(cells):
        return " | ".join(c for c in cells if c)
    return " | ".join(f"{h}: {c}" if h else c for h, c in zip(columns, cells, strict=True) if c)


def speaker_label(names: list[str]) -> str:
    """ "A", "A & B", "A, B & C", "A, B & 3 others"."""
    if len(names) <= 2:
        return " & ".join(names)
    if len(names) == 3:
        return f"{names[0]}, {names[1]} & {names[2]}"
    return f"{names[0]}, {names[1]} & {len(names) - 2} others"


__all__ = [
    "ABBREVIATIONS",
    "Unit",
    "has_cjk",
    "join_statements",
    "shorten",
    "speaker_label",
    "split_sentences",
    "text_units",
]
