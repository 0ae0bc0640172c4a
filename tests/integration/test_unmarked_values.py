"""Facts that change when nothing marks the value (issue 26): lower-case product and setting
names, "Owner: X" lines, chats, tickets, e-mails and bullet notes, in English and Chinese,
memorised as a user would (dated notes as a folder today, chats with their timestamps) with the
real embedding model. Every subject here is invented for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from memflow import Memory
from memflow.db.engine import transaction
from memflow.memory import Dataset
from memflow.recall.present import OUTDATED_MARK
from memflow.recall.types import SUPERSEDED_MARK

from ..conftest import notes_folder

pytestmark = pytest.mark.slow
MARKS = (OUTDATED_MARK, SUPERSEDED_MARK)


@pytest.fixture(scope="module")
def mem(local_mem: Memory) -> Memory:
    return local_mem


def _chat(*sessions: tuple[str, list[tuple[str, str]]]) -> str:
    return json.dumps({"sessions": [
        {"started_at": at, "messages": [{"speaker": s, "text": t} for s, t in turns]}
        for at, turns in sessions
    ]}, ensure_ascii=False)  # fmt: skip


def _context(ds: Dataset, query: str) -> str:
    return ds.search(query, display="highly_related").context


def _first(context: str, current: str, stale: str) -> bool:
    """The current value comes before the stale one (which may be absent)."""
    low = context.lower()
    cur, old = low.find(current.lower()), low.find(stale.lower())
    return cur >= 0 and (old < 0 or cur < old)


def _links(ds: Dataset) -> list[str]:
    ctx = ds.context
    with transaction(ctx.engine, ctx.dataset_id) as conn:
        rows = conn.execute(
            text(
                "SELECT search_text FROM memflow.node WHERE dataset_id = :ds AND kind = "
                "'FacetPoint' AND (props ? 'restates' OR props ? 'restated_by' OR "
                "invalid_at IS NOT NULL)"
            ),
            {"ds": ctx.dataset_id},
        ).all()
    return [str(r[0]) for r in rows]


def test_owner_lines_of_two_unrelated_notes_are_not_one_fact(mem: Memory, tmp_path: Path) -> None:
    ds = mem.dataset("owners")
    ds.memorize(
        notes_folder(tmp_path, "owners", {
            "2025-01-13 greenhouse sensors.md": "# Greenhouse sensor rollout\n\n"
            "Owner: Baptiste\n\nTwelve humidity probes per bay, readings every minute.\n",
            "2025-02-24 canteen menu.md": "# Canteen menu rotation\n\n"
            "Owner: Ottilie\n\nFour-week cycle, one vegan main every day.\n",
            "2025-03-03 负责人 温室.md": "# 温室传感器\n\n负责人：欧阳澜\n\n每个棚十二个湿度探头。\n",
            "2025-03-10 负责人 食堂.md": "# 食堂菜单轮换\n\n负责人：司马骏\n\n四周一个循环。\n",
        }),
    )  # fmt: skip
    assert _links(ds) == []
    context = _context(ds, "Who owns the greenhouse sensor rollout?")
    assert "Baptiste" in context and not any(m in context for m in MARKS), context


def test_an_owner_line_of_the_same_project_is_still_a_restatement(
    mem: Memory, tmp_path: Path
) -> None:
    ds = mem.dataset("owner-same")
    ds.memorize(
        notes_folder(tmp_path, "owner-same", {
            "2025-01-13 lantern app kickoff.md": "# Lantern app kickoff\n\nOwner: Baptiste\n",
            "2025-03-03 lantern app handover.md": "# Lantern app handover\n\nOwner: Ottilie\n",
        }),
    )  # fmt: skip
    context = _context(ds, "Who owns the Lantern app?")
    assert _first(context, "Ottilie", "Baptiste"), context


# Changes of a value no form marks (lower-case names, settings) and of typed ones, in wordings
# of different kinds: (name, documents, question, current, stale).
CHANGES = [
    (
        "chat-en",
        _chat(
            ("2025-04-02T10:00:00+00:00", [("Imogen", "which queue do the thumbnail jobs use?"),
                                          ("Dmitri", "they go through beanstalkd, one tube per size")]),
            ("2025-05-20T15:00:00+00:00", [("Dmitri", "heads up: thumbnail jobs run on nats now, "
                                                      "beanstalkd box is switched off")]),
        ),
        "Which queue do the thumbnail jobs use?", "nats", "beanstalkd",
    ),
    (
        "ticket-en",
        {"2025-02-03 INFRA-4410.md": "INFRA-4410 Backup tooling\nStatus: open\n\n"
                                     "Nightly backups of the wiki are taken with borgmatic.\n",
         "2025-03-17 INFRA-4410 update.md": "INFRA-4410 Backup tooling\n\n"
                                            "Nightly backups of the wiki are taken with restic now.\n"},
        "What tool takes the wiki backups?", "restic", "borgmatic",
    ),
    (
        "email-en",
        {"2025-01-08 mail.txt": "Subject: Image compression\nFrom: Ines\n\nHi all,\n"
                                "the default codec for uploaded photos is mozjpeg.\nInes\n",
         "2025-04-22 mail.txt": "Subject: Re: Image compression\nFrom: Ines\n\nHi all,\n"
                                "the default codec for uploaded photos is now avif.\nInes\n"},
        "What is the default codec for uploaded photos?", "avif", "mozjpeg",
    ),
    (
        "bullets-en",
        {"2025-05-05 ops notes.md": "# Ops notes 5 May\n\n- Feature flags live in unleash.\n"
                                    "- Pager rota unchanged.\n",
         "2025-06-16 ops notes.md": "# Ops notes 16 June\n\n- Feature flags live in flagd.\n"
                                    "- Two new dashboards for the batch jobs.\n"},
        "Where do feature flags live?", "flagd", "unleash",
    ),
    (
        "chat-zh",
        _chat(
            ("2025-04-02T10:00:00+08:00", [("秦朗", "缩略图任务现在走哪个队列？"),
                                          ("叶蓁", "走 beanstalkd，每个尺寸一个 tube")]),
            ("2025-05-20T15:00:00+08:00", [("叶蓁", "通知一下：缩略图任务已经改走 nats 了，beanstalkd 那台机器停了")]),
        ),
        "缩略图任务用什么队列？", "nats", "beanstalkd",
    ),
    (
        "bullets-zh",
        {"2025-05-05 运维周记.md": "# 运维周记 5月5日\n\n- 功能开关放在 unleash 里。\n- 值班表不变。\n",
         "2025-06-16 运维周记.md": "# 运维周记 6月16日\n\n- 功能开关改放在 flagd 里。\n- 批处理新增两个看板。\n"},
        "功能开关放在哪里？", "flagd", "unleash",
    ),
    (
        "ticket-zh",
        {"2025-02-03 工单.md": "工单 OPS-2291 备份工具\n\n知识库的夜间备份用 borgmatic 做。\n",
         "2025-03-17 工单更新.md": "工单 OPS-2291 备份工具\n\n知识库的夜间备份现在用 restic 做。\n"},
        "知识库的夜间备份用什么工具？", "restic", "borgmatic",
    ),
    (
        "owner-zh",
        {"2025-01-06 周会.md": "# 周会 1月6日\n\n- 园区门禁改造：负责人 欧阳澜\n",
         "2025-02-17 周会.md": "# 周会 2月17日\n\n- 园区门禁改造：负责人 司马骏\n"},
        "园区门禁改造的负责人是谁？", "司马骏", "欧阳澜",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "docs", "query", "current", "stale"), CHANGES,
                         ids=[c[0] for c in CHANGES])  # fmt: skip
def test_the_current_value_comes_first(
    mem: Memory,
    tmp_path: Path,
    name: str,
    docs: str | dict[str, str],
    query: str,
    current: str,
    stale: str,
) -> None:
    ds = mem.dataset(f"unmarked-{name}")
    if isinstance(docs, str):
        ds.memorize(docs)
    else:
        ds.memorize(notes_folder(tmp_path, name, docs))
    context = _context(ds, query)
    assert _first(context, current, stale), context


def _unmarked(context: str, stale: str) -> list[str]:
    return [
        line
        for line in context.splitlines()
        if stale.lower() in line.lower() and not any(m in line for m in MARKS)
    ]


def test_a_document_written_again_outdates_its_earlier_version(mem: Memory, tmp_path: Path) -> None:
    """Two versions of one document (the same title but for its date) answer the question: the
    older version's lines that the newer speaks of again are possibly outdated, though no value
    of theirs is a value of the newer's (i26-facts7, RecallConfig.present_versions)."""
    ds = mem.dataset("versions")
    ds.memorize(
        notes_folder(tmp_path, "versions", {
            "festival plan.md": "# Quillmere garden festival plan — 2025-02-03\n\n"
            "Small festival, residents only (about 200 people). Decide on music later.\n"
            "Publicity: a leaflet in every letterbox, no posters.\n",
            "festival plan v2.md": "# Quillmere garden festival — 2025-03-10\n\n"
            "Going for an open festival for the whole district on 14 June. Residents get early "
            "entry as a thank-you.\nPosters in the library; the leaflets are cancelled.\n",
            "allotment rota.md": "# Allotment rota — 2025-02-20\n\nWatering: Mondays and "
            "Thursdays. Tools are in the blue shed.\n",
            "2025-03-07 仓储组周报.md": "# 仓储组周报（2025年3月7日）\n\n| 事项 | 负责人 | 进度 |\n"
            "|---|---|---|\n| 拣货系统升级 | 龚立 | 30% |\n| 叉车年检 | 邱岚 | 50% |\n",
            "2025-04-04 仓储组周报.md": "# 仓储组周报（2025年4月4日）\n\n| 事项 | 负责人 | 进度 |\n"
            "|---|---|---|\n| 拣货系统升级 | 尹航 | 60% |\n| 叉车年检 | 邱岚 | 80% |\n",
            "2025-03-20 安全培训.md": "# 安全培训安排 2025-03-20\n\n每季度一次，新员工入职一周内完成。\n",
        }),
    )  # fmt: skip
    context = _context(ds, "What's the plan for the Quillmere garden festival?")
    assert "open festival" in context and not _unmarked(context, "residents only"), context
    context = _context(ds, "拣货系统升级是谁负责？")
    assert _first(context, "尹航", "龚立") and not _unmarked(context, "龚立"), context


def test_a_revision_note_saying_only_its_title_outdates_nothing(
    mem: Memory, tmp_path: Path
) -> None:
    """A later version of a document whose only line about the question is its title ("Garden
    budget revision (DATE)") gives no value: the approved line stays unmarked."""
    ds = mem.dataset("revision-title")
    ds.memorize(
        notes_folder(tmp_path, "revision-title", {
            "garden-budget.txt": "Garden budget 2025 (approved 2024-11-18)\nSeeds: EUR 900\n"
            "Tools: EUR 400\nCompost: EUR 250\n",
            "garden-budget-rev.txt": "Garden budget revision (2025-02-11)\nCompost lowered to "
            "EUR 150 after the council's free delivery. Other lines as approved.\n",
            "seed-orders.txt": "Seed orders spring 2025 (2025-03-01)\nTomatoes, beans, two kinds "
            "of squash. Delivery to the north gate.\n",
        }),
    )  # fmt: skip
    context = _context(ds, "What's the seeds budget for 2025?")
    assert _unmarked(context, "900"), context
