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
    ]
    a, b = store.dataset("twin-a"), store.dataset("twin-b")
    for ds in (a, b):
        ds.add_episodes(seed_drafts)
    for query in queries:
        for display in ("summary", "highly_related", "detail"):
            ra, rb = a.search(query, display=display), b.search(query, display=display)
            assert [(r.name, r.score, r.best_path) for r in ra.results] == [
                (r.name, r.score, r.best_path) for r in rb.results
            ], query
            assert ra.context == rb.context, query
