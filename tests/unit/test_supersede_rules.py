"""The rules path of supersession (pure): what must and must not replace an earlier point."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from memflow.text.supersede import PointFact, frame_of, relation_of, superseded_by_rules

T0 = datetime(2024, 1, 5, tzinfo=UTC)
T1 = datetime(2024, 3, 9, tzinfo=UTC)


def _p(text: str, speaker: str | None = None, at: datetime = T0) -> PointFact:
    return PointFact(uuid.uuid4(), text, speaker, at)


def _supersedes(
    old: str, new: str, old_speaker: str | None = None, new_speaker: str | None = None
) -> bool:
    o = _p(old, old_speaker, T0)
    n = _p(new, new_speaker, T1)
    found = superseded_by_rules(n, [o])
    assert all(s.old == o.id and s.new == n.id for s in found)
    return bool(found)


MUST = [
    ("Nora: I live in Boston.", "Nora: we moved to Seattle last week!", "Nora", "Nora"),
    ("Nora: I work at Initech.", "Nora: I just joined Globex.", "Nora", "Nora"),
    ("Nora: I work as a nurse.", "Nora: I work as a teacher.", "Nora", "Nora"),
    ("The review period for refunds is 35 days from delivery.",
     "The review period for refunds is 30 days from delivery.", None, None),
    ("Ana lives in Porto with her two cats.", "Ana lives in Braga with her two cats.", None, None),
    # A planned date changes when the text says it moved (in another note or session).
    ("The release of the billing service is planned for March 4.",
     "The release of the billing service was postponed to March 18.", None, None),
    ("发布会定在5月8日。", "发布会推迟到5月20日了。", None, None),
    # Value revisions: a change word and a value of the kind the earlier statement gave.
    ("Ken: my bus pass costs 60 euros.", "Ken: they raised my bus pass to 75 euros.", "Ken", "Ken"),
    ("Ken: we keep our recipes in Evernote.", "Ken: we switched our recipes to Obsidian.", "Ken", "Ken"),
    ("小林: 我们的周报发在邮件里。", "小林: 我们的周报换成Confluence了。", "小林", "小林"),
    # A state that stopped or started.
    ("Ken: I take sugar in my tea.", "Ken: I no longer take sugar in my tea.", "Ken", "Ken"),
    ("小林: 我吃辣。", "小林: 我不再吃辣了。", "小林", "小林"),
    # More ways of saying where one lives and works.
    ("Nora: my flat is in Lyon.", "Nora: I'm living in Nantes now.", "Nora", "Nora"),
    ("Nora: I'm a pharmacist at Boots.", "Nora: I got a new job at Lloyds.", "Nora", "Nora"),
    ("小林: 我的工作单位是华为。", "小林: 我跳槽去腾讯了。", "小林", "小林"),
    ("Ken: I eat meat every day at lunch.", "Ken: I don't eat meat every day at lunch.", "Ken", "Ken"),
    ("小林: 我住在北京。", "小林: 我们上个月搬到上海了。", "小林", "小林"),
    ("退款审核期为收货后35天内完成处理。", "退款审核期为收货后30天内完成处理。", None, None),
    ("陈静: 我在华为工作。", "陈静: 我现在在腾讯工作。", "陈静", "陈静"),
]  # fmt: skip

MUST_NOT = [
    # Two different people's cities.
    ("Nora: I live in Boston.", "Omar: I live in Denver.", "Nora", "Omar"),
    ("Ana lives in Porto with her two cats.", "Ben lives in Braga with his two cats.", None, None),
    # Additions, not replacements.
    ("Ken: I like tea.", "Ken: I like coffee too.", "Ken", "Ken"),
    ("Ken: I play the guitar on weekends.", "Ken: I also play the Piano on weekends.", "Ken", "Ken"),
    ("小林: 我喜欢喝茶。", "小林: 我也喜欢喝咖啡。", "小林", "小林"),
    # Plans, questions and hypotheticals.
    ("Nora: I live in Boston.", "Nora: we will move to Seattle next year.", "Nora", "Nora"),
    ("Nora: I live in Boston.", "Nora: should we move to Seattle?", "Nora", "Nora"),
    ("小林: 我住在北京。", "小林: 我们打算搬到上海。", "小林", "小林"),
    # Different statements that merely share words or numbers.
    ("Ken: I ran 5 km this morning before work.", "Ken: I ran 8 km this morning before work.", "Ken", "Ken"),
    ("Ken: we went to Lisbon in May.", "Ken: we went to Rome in June.", "Ken", "Ken"),
    ("Ken: I bought a new bike.", "Ken: I bought a new lamp.", "Ken", "Ken"),
    ("Ken: I visited Boston.", "Ken: I live in Seattle.", "Ken", "Ken"),
    ("Ken: my sister lives in Boston.", "Ken: I moved to Seattle.", "Ken", "Ken"),
    ("Ken: that was great!", "Ken: that was fun!", "Ken", "Ken"),
    ("Ken: I live in Seattle.", "Ken: we moved to Seattle last week.", "Ken", "Ken"),
    # A planned date in a later note without a word that it moved: another occurrence.
    ("A review is planned for 3 October.", "A review is planned for 15 October.", None, None),
    ("评审安排在10月3日。", "评审安排在10月15日。", None, None),
    # A change word about something else, an amount in another unit, a name among many.
    ("Ken: my bus pass costs 60 euros.", "Ken: we switched our gym to Fitlab.", "Ken", "Ken"),
    ("Ken: my bus pass costs 60 euros.", "Ken: my bus pass now covers 2 zones.", "Ken", "Ken"),
    ("Ken: I read a book by Ishiguro.", "Ken: I read a book by Murakami.", "Ken", "Ken"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "so", "sn"), MUST)
def test_restated_facts_with_a_new_value_supersede(old: str, new: str, so: str, sn: str) -> None:
    assert _supersedes(old, new, so, sn)


@pytest.mark.parametrize(("old", "new", "so", "sn"), MUST_NOT)
def test_look_alikes_do_not_supersede(old: str, new: str, so: str, sn: str) -> None:
    assert not _supersedes(old, new, so, sn)


def test_a_planned_date_revised_within_one_note_supersedes() -> None:
    # One dated note (or session) revising its own plan: a correction, no change word needed.
    old = _p("The release of the billing service is planned for March 4.", at=T0)
    new = _p("The release of the billing service is planned for March 18.", at=T0)
    assert [s.old for s in superseded_by_rules(new, [old])] == [old.id]
    # Dated notes: the event time (the note's date) decides, not when the file was written.
    a = PointFact(uuid.uuid4(), "A review is planned for 3 October.", None, T1, T0)
    b = PointFact(uuid.uuid4(), "A review is planned for 15 October.", None, T1, T1)
    assert superseded_by_rules(b, [a]) == []


def test_only_earlier_points_are_superseded() -> None:
    old = _p("The review period for refunds is 35 days from delivery.", at=T1)
    new = _p("The review period for refunds is 30 days from delivery.", at=T0)
    assert superseded_by_rules(new, [old]) == []


def test_frames_mask_values_and_negation() -> None:
    f = frame_of("The review period is 35 days, not 40")
    assert f.values == ("35", "40") and f.negated
    assert relation_of("I live in New York now") == ("residence", "new york")
    assert relation_of("我们搬到上海了") == ("residence", "上海")
    assert relation_of("I like New York") is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Ticket T-0-1 moves to the Beijing office.", "Ticket T-0-2 moves to the Beijing office."),
        ("Priya owns the follow-up of meeting 3.", "Priya owns the follow-up of meeting 4."),
        (
            "PostgreSQL owns the follow-up of the launch.",
            "Kubernetes owns the follow-up of the launch.",
        ),
    ],
)
def test_identifiers_and_numbered_subjects_are_not_values(old: str, new: str) -> None:
    assert not _supersedes(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A name said to the listener is not a value.
        ("Ken: Thanks, Ravi! The new bike is great.", "Ken: Thanks so much, Ines! I'm moving on."),
        # A change word far from the value, in another clause.
        ("Ken: I play chess with Vera.", "Ken: I'm busier now, but chess with Olga is fun."),
        # A stop word that is negated, and an encouragement to the listener.
        ("Ken: I never quit my running.", "Ken: I won't stop running, I love running again."),
        ("Ken: I'm going for my goals!", "Ken: Keep going for your goals and don't give up!"),
        # An episode told with a past time.
        ("Ken: I can't wait for the concert.", "Ken: Yesterday I had to wait an hour again."),
    ],
)
def test_chat_look_alikes_of_a_change_do_not_supersede(old: str, new: str) -> None:
    assert not _supersedes(old, new, "Ken", "Ken")


def test_values_keep_their_kind_and_unit() -> None:
    from memflow.text.revision import values_of

    assert [(v.kind, v.text) for v in values_of("My rent is 1200 euros a month.")] == [
        ("amount:euro", "1200")
    ]
    assert [(v.kind, v.text) for v in values_of("发布会推迟到5月20日了。")] == [("date", "5月20日")]
    assert [v.text for v in values_of("Thanks, Ravi! We moved to Quay Tower.")] == ["quay tower"]


def test_a_change_by_someone_else_does_not_revise_a_statement() -> None:
    """A value revision needs the subject in front of the change word to be the earlier
    statement's too: another person moving another thing that shares a word is no revision."""
    ravi = PointFact(
        uuid.uuid4(), "Ravi moved the privacy cache to June 17 after the migration review."
    )
    dario = PointFact(
        uuid.uuid4(), "Dario moved the cache audit to April 13 after the payment review."
    )
    assert superseded_by_rules(dario, [ravi]) == []
    launch = PointFact(uuid.uuid4(), "The launch review is on May 3.")
    moved = PointFact(uuid.uuid4(), "The launch review was moved to May 10.")
    assert [s.old for s in superseded_by_rules(moved, [launch])] == [launch.id]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We moved the design review to May 3.", "We moved the code review to May 10."),
        ("Anna moved the budget review to June 2.", "Anna moved the hiring review to June 9."),
        ("设计评审改到5月3日。", "代码评审改到5月10日。"),
    ],
)
def test_a_frame_about_another_thing_is_no_change(old: str, new: str) -> None:
    """Same sentence shape, another thing in it (a content word substituted): two facts."""
    a, b = PointFact(uuid.uuid4(), old), PointFact(uuid.uuid4(), new)
    assert superseded_by_rules(b, [a]) == []


def test_a_frame_with_a_word_added_still_changes() -> None:
    a = PointFact(uuid.uuid4(), "Our standup is at 9:30 in room B.")
    b = PointFact(uuid.uuid4(), "Our standup is now at 10:15 in room B.")
    assert [s.rule for s in superseded_by_rules(b, [a])] == ["frame"]
