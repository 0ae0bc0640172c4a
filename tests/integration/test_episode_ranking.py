"""Episode ranking decided by evidence, not by hub entities or ids (conversations invented here).

The person asked about speaks more in the session that does not answer: a speaker entity linked
to every session must not pull that session first. Same in Chinese, with Chinese speaker names.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memflow import Memory
from memflow.embed.local import LocalEmbedder

pytestmark = pytest.mark.slow

ENGLISH = {
    "title": "Evening chats",
    "sessions": [
        {
            "started_at": "2024-03-04T19:00:00Z",
            "messages": [
                {"speaker": "Priya", "text": "I spent the whole weekend at the animal shelter."},
                {"speaker": "Tomas", "text": "That sounds tiring. How many dogs were there?"},
                {"speaker": "Priya", "text": "Eleven dogs and a very grumpy old cat."},
                {"speaker": "Priya", "text": "I walked four of them along the river twice."},
                {"speaker": "Priya", "text": "I am thinking about training as a vet nurse."},
                {"speaker": "Tomas", "text": "I finally repaired the gears on my old bicycle."},
                {"speaker": "Priya", "text": "Nice! I still need to fix the shelter's fence."},
                {"speaker": "Priya", "text": "The volunteers there are lovely people."},
            ],
        },
        {
            "started_at": "2024-04-20T18:30:00Z",
            "messages": [
                {"speaker": "Tomas", "text": "We went hiking in the mountains last weekend."},
                {"speaker": "Tomas", "text": "The view from the ridge was unbelievable."},
                {
                    "speaker": "Priya",
                    "text": "I signed up for a woodworking class that starts in May.",
                },
                {"speaker": "Tomas", "text": "Woodworking! You will build a bookshelf in no time."},
            ],
        },
    ],
}

CHINESE = {
    "title": "周末闲聊",
    "sessions": [
        {
            "started_at": "2024-05-06T20:00:00+08:00",
            "messages": [
                {"speaker": "王芳", "text": "这周我在公司加班了三个晚上。"},
                {"speaker": "李雷", "text": "太辛苦了，项目什么时候上线？"},
                {"speaker": "王芳", "text": "下个月初上线，测试还没有做完。"},
                {"speaker": "王芳", "text": "我们组新来了两个实习生。"},
                {"speaker": "王芳", "text": "我打算年底换一个离家近的工作。"},
                {"speaker": "李雷", "text": "我最近在学游泳，已经能游五十米了。"},
                {"speaker": "王芳", "text": "真厉害！我还是只会在浅水区走路。"},
                {"speaker": "王芳", "text": "周末我想好好睡一觉。"},
            ],
        },
        {
            "started_at": "2024-06-15T20:00:00+08:00",
            "messages": [
                {"speaker": "李雷", "text": "上周末我们全家去海边露营了。"},
                {"speaker": "李雷", "text": "晚上的星空特别漂亮。"},
                {"speaker": "王芳", "text": "我报名了一个陶艺课，七月开始上课。"},
                {"speaker": "李雷", "text": "陶艺！以后可以送我一个杯子。"},
            ],
        },
    ],
}


def _note(name: str, aspect: str, fact: str, owner: str) -> dict[str, Any]:
    return {
        "name": name,
        "summary": f"【{aspect}】{fact}",
        "facets": [
            {
                "search_text": aspect,
                "anchor_text": fact,
                "points": [{"search_text": fact}, {"search_text": f"{owner} 负责"}],
            }
        ],
        "entities": [{"name": owner, "role": "负责人"}, {"name": "平台组", "role": "团队"}],
    }


# Ten short, deliberately similar team notes (same team entity everywhere, repeated aspects), so
# that near-ties are common and any id-based tie-break would show.
TEAM_NOTES = [
    _note("数据库选型会议", "决定", "订单库迁移到 PostgreSQL 16，P99 延迟要求 120 毫秒。", "周敏"),
    _note("GDPR 数据删除请求处理", "流程", "删除请求 30 天内完成，P99 处理时间不限。", "陈涛"),
    _note("压测复盘", "结论", "P99 延迟 95 毫秒，达标。", "周敏"),
    _note("缓存改造", "约束", "缓存键不能包含用户邮箱。", "陈涛"),
    _note("发布窗口调整", "决定", "每周四下午发布，周五冻结。", "李娜"),
    _note("监控告警整理", "约束", "告警必须在五分钟内送达值班人。", "李娜"),
    _note("Onboarding checklist", "steps", "New engineers get database access on day two.", "Ana"),
    _note("Incident review", "decision", "We roll back first and investigate after.", "Ana"),
    _note("Search latency budget", "constraint", "P99 latency must stay under 200 ms.", "Ben"),
    _note("Vendor contract renewal", "deadline", "The contract renews on 1 March 2025.", "Ben"),
]


@pytest.fixture(scope="module")
def store(pg_admin_url: str, template_db: str) -> Any:
    from ..conftest import _scratch_database

    with (
        _scratch_database(pg_admin_url, "memflow_test_template") as url,
        Memory.open(url, embedder=LocalEmbedder()) as mem,
    ):
        yield mem


@pytest.mark.parametrize(
    ("conversation", "query", "answer"),
    [
        (ENGLISH, "What class did Priya sign up for?", "woodworking class"),
        (CHINESE, "王芳报名了什么课？", "陶艺课"),
    ],
    ids=["english", "chinese"],
)
def test_answering_session_ranks_first_over_the_talkative_one(
    store: Any, conversation: dict[str, Any], query: str, answer: str
) -> None:
    ds = store.dataset(f"rank-{conversation['title']}")
    ds.memorize(json.dumps(conversation, ensure_ascii=False), extractor="rules")
    assert ds.stats()["episodes"] == 2
    for display in ("summary", "highly_related", "detail"):
        resp = ds.search(query, display=display)
        top = resp.results[0]
        assert top.time is not None and top.time.startswith(
            conversation["sessions"][1]["started_at"][:7]
        ), (display, [(r.name, r.time, r.score) for r in resp.results])
    related = ds.search(query, display="highly_related", budget_tokens=60)
    assert answer in related.results[0].context or answer in related.context.split("\n\n")[0]


def test_same_content_in_two_datasets_ranks_identically(
    store: Any, seed_drafts: list[dict[str, Any]]
) -> None:
    queries = [
        "API 流式返回那个任务有哪些约束？",
        "首页文案什么时候交付？",
        "鉴权中间件能改吗",
        "谁负责首页文案？",
        "流式返回要改哪个接口？",
        "What must not change in the streaming task?",
        "When is the homepage copy due?",
        "测试要覆盖什么？",
        "响应层怎么改",
        "/chat/completions",
        "交付时间",
        "文案",
        "约束",
        "middleware",
        "deadline",
        "who owns it",
        "背景是什么",
        "需要改测试吗",
        "上线时间",
        "API",
        "P99 延迟要求是多少？",
        "谁负责数据库迁移？",
        "What is the latency budget?",
        "When does the contract renew?",
    ]
    a, b = store.dataset("twin-a"), store.dataset("twin-b")
    for ds in (a, b):
        ds.add_episodes(seed_drafts)
        ds.add_episodes(TEAM_NOTES)
    for query in queries:
        for display in ("summary", "highly_related", "detail"):
            ra, rb = a.search(query, display=display), b.search(query, display=display)
            assert [(r.name, r.score, r.best_path) for r in ra.results] == [
                (r.name, r.score, r.best_path) for r in rb.results
            ], query
            assert ra.context == rb.context, query
