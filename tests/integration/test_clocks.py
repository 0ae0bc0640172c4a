"""Two clocks (issue 26, part 1) and undoing a wrong closure (part 4), on a real PostgreSQL.

``as_of`` reads the sources' own dates (a note's title, heading, front matter, e-mail header or
file name date, a message's time); ``known_at`` reads when memflow wrote each row. Notes and
chats invented here; the hash embedder (nothing here needs meaning)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memflow.errors import InvalidInput, NotFound
from memflow.memory import Dataset, Memory


def _d(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def _units(ds: Dataset, query: str, **kw: object) -> list[str]:
    resp = ds.search(query, display="highly_related", budget_tokens=5000, **kw)  # type: ignore[arg-type]
    return [line for line in resp.context.splitlines() if not line.startswith("[")]


NOTES = {
    # a title date, a heading date, front matter, an e-mail header and a file name date
    "standup.md": "# Kiosk standup — 3 Sep 2024\n\nThe kiosk firmware build runs on Jenkins.\n",
    "journal.md": (
        "# Kiosk journal\n\n## 12 Sep 2024\n\nThe kiosk firmware build runs on Buildkite.\n\n"
        "## 30 Sep 2024\n\nThe kiosk firmware build runs on GitHub Actions.\n"
    ),
    "plan.md": "---\ntitle: Kiosk plan\ndate: 2024-10-14\n---\n\nThe kiosk firmware build runs on CircleCI.\n",
    "mail.txt": (
        "From: Ana <ana@example.com>\nTo: kiosk team\nDate: Mon, 21 Oct 2024 09:00:00 +0000\n"
        "Subject: Kiosk build\n\nThe kiosk firmware build runs on Drone now.\n"
    ),
    "2024-11-04-kiosk.md": "# Kiosk notes\n\nThe kiosk firmware build runs on TeamCity.\n",
}
# Each CI name and the first day the notes say it.
SAID = [
    ("Jenkins", "2024-09-03"),
    ("Buildkite", "2024-09-12"),
    ("GitHub Actions", "2024-09-30"),
    ("CircleCI", "2024-10-14"),
    ("Drone", "2024-10-21"),
    ("TeamCity", "2024-11-04"),
]


@pytest.fixture
def notes(mem: Memory, tmp_path: Path) -> Dataset:
    folder = tmp_path / "kiosk"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    ds = mem.dataset("kiosk")
    ds.memorize(str(folder), extractor="rules")  # today, no reference time: the files' own dates
    return ds


def test_as_of_reads_each_notes_own_date_not_the_day_they_were_memorised(notes: Dataset) -> None:
    query = "Which CI runs the kiosk firmware build?"
    for i, (_, day) in enumerate(SAID):
        shown = " ".join(_units(notes, query, as_of=_d(day) + timedelta(hours=12)))
        for earlier, _ in SAID[: i + 1]:
            assert earlier in shown, (day, shown)  # nothing was closed: all said by then
        for later, _ in SAID[i + 1 :]:
            assert later not in shown, (day, shown)
    assert _units(notes, query, as_of=_d("2024-09-01")) == []  # before the first note


@pytest.mark.slow
def test_as_of_finds_an_earlier_mail_merged_into_a_later_ones_episode(
    local_mem: Memory, tmp_path: Path
) -> None:
    # Two notices under one subject: the later is memorised first (file order), the earlier
    # merges into its episode and keeps its own date.
    folder = tmp_path / "refund"
    folder.mkdir()
    head = "From: Refunds <refunds@example.com>\nTo: Ida\nDate: {}\nSubject: Refund R-77 update\n\nHello Ida,\n\n"
    (folder / "a-paid.txt").write_text(
        head.format("Fri, 26 Sep 2025 15:00:00 +0000") + "Refund R-77 has been paid out.\n"
    )
    (folder / "b-review.txt").write_text(
        head.format("Fri, 12 Sep 2025 11:00:00 +0000") + "Refund R-77 is under review.\n"
    )
    ds = local_mem.dataset("refund")  # (the real model: routing merges them by meaning)
    ds.memorize(str(folder), extractor="rules")
    episodes = ds.search("refund R-77", display="summary", budget_tokens=5000).context
    assert episodes.count("[Refund R-77 update]") == 1  # one episode, dated by the later mail
    shown = " ".join(_units(ds, "What is the state of refund R-77?", as_of=_d("2025-09-18")))
    assert "under review" in shown
    assert "paid out" not in shown


def test_each_statement_is_recorded_at_its_source_date(notes: Dataset) -> None:
    resp = notes.search(
        "Which CI runs the kiosk firmware build?", display="highly_related", budget_tokens=5000
    )
    points = [u for u in resp.context_units if u.kind == "FacetPoint"]
    assert len(points) == len(SAID)
    # Every point's record time is its note's own day, never the day it was memorised.
    days = {u.recorded_at.date().isoformat() for u in points if u.recorded_at is not None}
    assert days == {day for _, day in SAID}, days


def test_known_at_reads_the_write_clock(mem: Memory) -> None:
    ds = mem.dataset("clock")
    ds.memorize("# Kiosk sync — 2 Oct 2024\n\nThe kiosk pilot store is in Porto.\n")
    between = datetime.now(UTC)
    time.sleep(0.05)
    # Written later, but dated earlier by its own title.
    ds.memorize("# Kiosk sync — 5 Sep 2024\n\nThe kiosk pilot store is in Braga.\n")
    query = "Where is the kiosk pilot store?"
    assert "Braga" not in " ".join(_units(ds, query, known_at=between))
    assert "Porto" in " ".join(_units(ds, query, known_at=between))
    assert _units(ds, query, known_at=between - timedelta(days=1)) == []
    # By the sources' dates Braga came first: as of mid September only Braga was said.
    shown = " ".join(_units(ds, query, as_of=_d("2024-09-15")))
    assert "Braga" in shown and "Porto" not in shown
    # Both clocks at once: what the store knew at `between` about mid September: nothing.
    assert _units(ds, query, as_of=_d("2024-09-15"), known_at=between) == []


def _chat(started: str, speaker: str, said: str) -> str:
    session = {"started_at": started, "messages": [{"speaker": speaker, "text": said}]}
    return json.dumps({"sessions": [session]})


@pytest.fixture
def moved(mem: Memory) -> tuple[Dataset, datetime]:
    ds = mem.dataset("moves")
    ds.memorize(_chat("2023-01-10T10:00:00+00:00", "Mia", "I live in Boston."))
    between = datetime.now(UTC)
    time.sleep(0.05)
    ds.memorize(_chat("2023-03-09T10:00:00+00:00", "Mia", "We moved to Seattle last week!"))
    return ds, between


def _boston(ds: Dataset) -> str:
    resp = ds.search("Where does Mia live?", display="highly_related", budget_tokens=5000)
    return str(next(u.node_id for u in resp.context_units if u.invalid_at is not None))


def test_history_as_it_stood_on_either_clock(moved: tuple[Dataset, datetime]) -> None:
    ds, between = moved
    boston = _boston(ds)
    now = ds.history(boston)
    assert [(e.text.split()[-1], e.current) for e in now] == [("Boston.", False), ("week!", True)]
    assert now[0].why is not None and now[0].why["by"] == "rule"
    assert now[0].created_at is not None and now[1].created_at is not None
    for then in (
        ds.history(boston, as_of=_d("2023-02-01")),
        ds.history(boston, known_at=between),
    ):
        assert [(e.text, e.current) for e in then] == [("Mia: I live in Boston.", True)]


def test_reopen_undoes_a_wrong_closure_and_is_logged(moved: tuple[Dataset, datetime]) -> None:
    ds, _ = moved
    boston = _boston(ds)
    with pytest.raises(InvalidInput, match=f"memflow reopen {boston}"):
        ds.correct(boston, "Mia: I live in Cambridge.")
    entry = ds.reopen(boston, actor="mia")
    assert entry.current and entry.text == "Mia: I live in Boston."
    assert [(c.action, c.reason, c.actor) for c in entry.changes][-1] == (
        "reopen",
        "correction",
        "mia",
    )
    ctx = ds.search("Where does Mia live?", display="highly_related").context
    assert "Boston" in ctx and "superseded" not in ctx  # both hold now
    history = ds.history(boston)
    assert [e.current for e in history] == [True]  # no longer linked to Seattle
    assert history[0].changes[0].action == "supersede"  # the closure stays on record
    with pytest.raises(InvalidInput, match="not closed"):
        ds.reopen(boston)
    with pytest.raises(NotFound):
        ds.reopen("00000000-0000-0000-0000-000000000000")
    fixed = ds.correct(boston, "Mia: I live in Cambridge.")  # now it can be corrected
    assert ds.history(fixed)[-1].text == "Mia: I live in Cambridge."
