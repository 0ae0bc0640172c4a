"""Dates that are right (issue 12, item 5): a note is dated by its title before its body, and a
query that names a date ranks that date's episode first (journal entries invented here)."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from memflow import Memory
from memflow.embed.local import LocalEmbedder

pytestmark = pytest.mark.slow

_EN_MONTHS = "January February March April May June July August September October November December"
MONTHS = _EN_MONTHS.split()
SERVICES = [
    "billing API",
    "search index",
    "mobile app",
    "checkout page",
    "data warehouse",
    "login service",
    "report builder",
    "mail queue",
    "image resizer",
    "audit log",
]
CHANGES = [
    "move it to PostgreSQL 16",
    "freeze new features for two weeks",
    "add a canary stage",
    "drop the legacy cache",
    "rewrite the retry logic",
    "switch the CI runners to ARM",
    "cap the batch size at 500",
    "adopt feature flags",
    "split the on-call rota",
    "publish a weekly status page",
]
ZH_SERVICES = [
    "计费接口",
    "搜索索引",
    "移动端",
    "结算页",
    "数据仓库",
    "登录服务",
    "报表工具",
    "邮件队列",
    "图片服务",
    "审计日志",
]
ZH_CHANGES = ["迁移到 PostgreSQL 16", "暂停新功能两周", "增加灰度发布阶段", "下线旧缓存",
              "重写重试逻辑", "把 CI 换成 ARM 机器", "把批量上限定为 500", "引入功能开关",
              "拆分值班表", "每周发布状态页"]  # fmt: skip


def _en_date(d: date, style: int) -> str:
    month = MONTHS[d.month - 1]
    return [f"{d.day} {month[:3]} {d.year}", f"{d:%Y-%m-%d}", f"{month} {d.day}, {d.year}"][
        style % 3
    ]


def _title(d: date, i: int, zh: bool) -> str:
    if zh:
        return [f"{d.year}年{d.month}月{d.day}日 周会纪要", f"周会 — {d:%Y-%m-%d}"][i % 2]
    when = _en_date(d, i)
    return [f"Platform sync — {when}", f"{when} standup", f"Weekly notes, {when}"][i % 3]


def journal_entries(n: int = 50, seed: int = 12) -> list[tuple[date, str, bool]]:
    """``n`` Markdown notes, one every five days of 2024, each titled with its date (English and
    Chinese formats) and mentioning in its body another entry's date as a planned review.

    (The review is phrased as a plan, "we will review it on ...", "计划在...": the same line
    with another date in every entry, "a review is planned for X", is read by the supersession
    rules as a restated fact with a new value, so each entry would close the previous one's.)"""
    rng = random.Random(seed)
    days = [date(2024, 1, 8) + timedelta(days=5 * i) for i in range(n)]
    out = []
    for i, d in enumerate(days):
        zh = i % 3 == 2
        other = days[(i + 7) % n]
        svc, change = rng.randrange(10), rng.randrange(10)
        if zh:
            review = f"{other.year}年{other.month}月{other.day}日"
            body = (
                f"我们决定{ZH_SERVICES[svc]}{ZH_CHANGES[change]}。\n\n"
                f"负责人会跟进，下次复查计划在{review}。"
            )
        else:
            body = (
                f"We decided that the {SERVICES[svc]} should {CHANGES[change]}.\n\n"
                f"The owner follows up; we will review it on {_en_date(other, i + 1)}."
            )
        out.append((d, f"# {_title(d, i, zh)}\n\n{body}\n", zh))
    return out


@pytest.fixture(scope="module")
def journal(pg_admin_url: str, template_db: str) -> Any:
    from ..conftest import _scratch_database

    with (
        _scratch_database(pg_admin_url, "memflow_test_template") as url,
        Memory.open(url, embedder=LocalEmbedder()) as mem,
    ):
        ds = mem.dataset("journal")
        entries = journal_entries()
        written = datetime(2024, 12, 31, tzinfo=UTC)
        for _, text, _ in entries:
            ds.memorize(
                text.encode(), content_type="markdown", reference_time=written, extractor="rules"
            )
        # Alike notes of different days are different events: routing never merges them.
        assert ds.stats()["episodes"] == len(entries)
        yield ds, entries


def test_every_journal_entry_is_dated_by_its_title(journal: Any) -> None:
    ds, entries = journal
    for d, text, _ in entries[:12]:
        title = text.split("\n", 1)[0][2:]
        resp = ds.search(title, top_k=1)
        assert resp.results[0].time is not None
        assert resp.results[0].time.startswith(d.isoformat()), (title, resp.results[0].time)


def _query(d: date, zh: bool, k: int) -> str:
    if zh:
        return [
            f"{d.year}年{d.month}月{d.day}日我们决定了什么？",
            f"{d.month}月{d.day}日的周会定了什么",
        ][k % 2]
    month = MONTHS[d.month - 1]
    return [f"What did we decide on {d.day} {month} {d.year}?",
            f"decisions from {month} {d.day}, {d.year}"][k % 2]  # fmt: skip


@pytest.mark.parametrize("zh", [False, True], ids=["english", "chinese"])
def test_a_dated_query_ranks_that_dates_entry_first(journal: Any, zh: bool) -> None:
    ds, entries = journal
    targets = [e for e in entries if e[2] == zh][::3]
    assert len(targets) >= 5
    now = datetime(2024, 12, 31, tzinfo=UTC)
    for k, (d, _, _) in enumerate(targets):
        query = _query(d, zh, k)
        resp = ds.search(query, top_k=3, now=now)
        got = [r.time for r in resp.results]
        assert got and got[0] is not None and got[0].startswith(d.isoformat()), (query, got)
