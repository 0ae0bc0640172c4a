"""What keeps supersession cheap on every write must not change what it decides: the bound in
front of the frame alignment, the alignment reused across candidates, the departure patterns
compiled once per value, and masked statements embedded only for the pairs that need them."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from difflib import SequenceMatcher

from hypothesis import given, settings
from hypothesis import strategies as st

from memflow.embed.hash import HashEmbedder
from memflow.store.conflicts import ConflictFinder, ConflictSettings, Said
from memflow.text.conflict import _DEPART_EN, _DEPART_ZH, _departed
from memflow.text.supersede import Frame, PointFact, frame_of, superseded_by_rules
from memflow.text.values import Value, is_zh

T0 = datetime(2023, 2, 1, tzinfo=UTC)
T1 = datetime(2023, 5, 1, tzinfo=UTC)

_TOKENS = st.lists(st.sampled_from(["a", "b", "c", "d", "<v>", "e"]), min_size=1, max_size=12)


@given(_TOKENS, _TOKENS)
@settings(max_examples=300, deadline=None)
def test_the_bound_is_never_below_the_alignment(a: list[str], b: list[str]) -> None:
    fa, fb = Frame(tuple(a), (), False), Frame(tuple(b), (), False)
    ratio = SequenceMatcher(None, fa.tokens, fb.tokens, autojunk=False).ratio()
    assert fb.ratio_bound(fa) >= ratio
    assert fa.ratio_bound(fb) == fb.ratio_bound(fa)


def test_the_bound_is_tight_for_a_reordering() -> None:
    a = frame_of("the pottery class starts at 6 on the east campus")
    b = frame_of("on the east campus the pottery class starts at 6")
    assert a.ratio_bound(b) == 1.0 > SequenceMatcher(None, a.tokens, b.tokens).ratio()


def test_many_candidates_decide_as_each_alone() -> None:
    """One aligner serves every candidate of a new point: each candidate is decided as if it
    were the only one (no state from the one before)."""
    olds = [
        "The pottery class meets in room 12 every Thursday.",
        "Our cello teacher charges 40 euros per lesson.",
        "The pottery class meets in the garden shed every Thursday.",
        "Nadia lives in Ghent.",
        "The kiln firing costs 15 euros per shelf.",
        "The choir rehearses in the old gym every Tuesday.",
    ]
    for new_text in (
        "The pottery class meets in room 14 every Thursday.",
        "Our cello teacher charges 45 euros per lesson.",
        "The kiln firing costs 18 euros per shelf.",
    ):
        new = PointFact(uuid.uuid4(), new_text, None, T1)
        cands = [PointFact(uuid.uuid4(), t, None, T0) for t in olds]
        together = {(s.old, s.rule, s.detail) for s in superseded_by_rules(new, cands)}
        alone = {(s.old, s.rule, s.detail) for c in cands for s in superseded_by_rules(new, [c])}
        assert together == alone and together, new_text


def _departed_reference(new: str, value: Value) -> bool:
    x = re.escape(value.text)
    patterns = _DEPART_ZH if is_zh(new) else _DEPART_EN
    return any(re.search(p.format(x=x), new, re.IGNORECASE) for p in patterns)


def test_departures_read_as_the_patterns_one_by_one() -> None:
    texts = [
        "We switched from Mattermost to Zulip last spring.",
        "MATTERMOST is no longer used by the lab.",
        "The lab uses Zulip instead of mattermost.",
        "The lab still uses Mattermost daily.",
        "Kiln B -> kiln C for the glaze tests.",
        "实验室不再用Mattermost了。",
        "聊天工具从Mattermost改为Zulip。",
        "实验室每天都用Mattermost。",
    ]
    for value in ("mattermost", "kiln b", "zulip"):
        v = Value("name", value, value, 0, len(value))
        for t in texts:
            assert _departed(t, v) == _departed_reference(t, v), (t, value)


class _Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(384)
        self.texts: list[str] = []

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed_passages(texts)


def _said(text: str, when: datetime) -> Said:
    return Said(uuid.uuid4(), text, None, when, when, True)


def test_masked_statements_are_embedded_only_for_pairs_decided_by_them() -> None:
    """A change with nothing in common besides its value (two places' opening hours) is
    decided without its masked similarity: none of its statements is embedded."""
    emb = _Counting()
    finder = ConflictFinder(emb, ConflictSettings())
    related = (
        _said("The swim hall opens at 7:00.", T0),
        _said("The swim hall now opens at 8:00.", T1),
    )
    unrelated = (_said("Lunch is at 12:00.", T0), _said("The bike shop opens at 9:00.", T1))
    finder._judge([(*related, 0.9), (*unrelated, 0.9)])
    assert any("swim hall" in t for t in emb.texts), emb.texts
    assert not any("Lunch" in t or "bike" in t for t in emb.texts), emb.texts


_STATEMENTS = [
    "The pottery class meets in room 12 every Thursday.",
    "The pottery class meets in room 14 every Thursday.",
    "Should the pottery class meet in room 14?",
    "I live in Antwerp.",
    "We moved to Leuven!",
    "Yesterday I fixed the kiln.",
    "I no longer play the cello.",
    "I play the cello.",
    "Nice.",
    "The glaze order moved to 9 May.",
    "The glaze order is due on 2 May.",
    "I also joined the choir.",
    "我住在无锡。",
    "我们搬到苏州了。",
    "你要不要一起去？",
    "我不再喝咖啡了。",
    "我喝咖啡。",
]


def test_a_statement_that_may_not_supersede_supersedes_nothing() -> None:
    from memflow.text.supersede import may_supersede

    facts = [
        PointFact(uuid.uuid4(), t, "Mia", T0 if i % 2 else T1) for i, t in enumerate(_STATEMENTS)
    ]
    never = [f for f in facts if not may_supersede(f)]
    assert {f.text for f in never} >= {"Nice.", "Should the pottery class meet in room 14?",
                                       "你要不要一起去？", "Yesterday I fixed the kiln."}  # fmt: skip
    for f in facts:
        later = PointFact(f.id, f.text, f.speaker, T1)
        if not may_supersede(later):
            assert superseded_by_rules(later, [c for c in facts if c.id != f.id]) == [], f.text
    assert any(superseded_by_rules(PointFact(f.id, f.text, "Mia", T1), facts) for f in facts)


def test_the_days_two_notes_were_written_are_no_change() -> None:
    """A heading's own date against another note's own date says when each was written: no
    pair, however alike the two statements; a date that is not its note's own still pairs."""
    emb = _Counting()
    finder = ConflictFinder(emb, ConflictSettings(link_similarity=-1.0, close_similarity=-1.0))
    old_day, new_day = datetime(2024, 12, 10, tzinfo=UTC), datetime(2025, 3, 18, tzinfo=UTC)
    older = _said("Plant sale budget (approved 2024-12-10): pots EUR 600.", old_day)
    newer = _said("Plant sale budget revision (2025-03-18)", new_day)
    assert finder._judge([(older, newer, 0.9)]) == []
    due = _said("Plant sale budget due 2024-12-10.", old_day)  # the note's day, as a deadline
    moved = _said("Plant sale budget now due 2025-03-25.", new_day)
    assert [f.diff.kind for f in finder._judge([(due, moved, 0.9)])] == ["when"]
