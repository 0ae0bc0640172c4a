"""The model path of supersession against the scripted OpenAI-compatible server: decisions,
malformed and slow replies (the document is still written, by the rules only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from memflow.db import engine as dbe
from memflow.ingest.options import MemorizeOptions
from memflow.llm.client import LlmClient, LlmSettings
from memflow.llm.supersede import LlmSuperseder
from memflow.memory import Dataset, Memory

from ..support.fake_openai import ChatJson, ChatText, FakeOpenAI, Respond, Slow

OLD = "Ren: I am vegetarian and cook lentils most evenings."
NEW = "Ren: I am pescatarian and cook fish most evenings."


def _chat(started: str, speaker_text: str) -> str:
    speaker, said = speaker_text.split(": ", 1)
    return json.dumps(
        {"sessions": [{"started_at": started, "messages": [{"speaker": speaker, "text": said}]}]}
    )


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def _memorize(ds: Dataset, content: str, client: LlmClient) -> Any:
    model = LlmSuperseder(client, min_similarity=0.6)
    opts = MemorizeOptions(extractor="rules", supersede=model)
    return ds.memorize(content, options=opts), model


def _changes(db_url: str) -> list[tuple[str, str]]:
    eng = dbe.make_engine(db_url)
    with eng.connect() as conn:
        rows = conn.execute(text("SELECT action, reason FROM memflow.change_log")).all()
    eng.dispose()
    return [(r.action, r.reason) for r in rows]


def _client(fake: FakeOpenAI, **kw: Any) -> LlmClient:
    return LlmClient(LlmSettings(base_url=fake.base_url, model="m", api_key="k", **kw))


def test_an_update_decision_closes_the_stored_fact(
    mem: Memory, fake: FakeOpenAI, db_url: str
) -> None:
    ds = mem.dataset("diet")
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        prompt = "\n".join(m["content"] for m in body["messages"])
        seen.append(prompt)
        return {"decisions": [{"candidate": 1, "relation": "update"}]}

    fake.script_chat(Respond(answer))
    with _client(fake, timeout_s=5) as client:
        _memorize(ds, _chat("2024-01-02T09:00:00+00:00", OLD), client)
        assert not seen  # nothing stored yet: no candidates, no call
        _memorize(ds, _chat("2024-05-02T09:00:00+00:00", NEW), client)
    assert seen and OLD in seen[0] and NEW in seen[0]
    assert fake.chat_requests[0].body["response_format"]["json_schema"]["strict"] is True
    assert _changes(db_url) == [("supersede", "model")]
    resp = ds.search("what does Ren eat?", display="highly_related")
    assert "superseded, valid until 2024-05-02" in resp.context
    # Why it was closed (issue 26): the model's decision and the candidate's similarity.
    closed = next(u for u in resp.context_units if u.invalid_at is not None and u.node_id)
    (old, new) = ds.history(closed.node_id)
    assert old.why is not None and old.why["by"] == "model" and old.why["decision"] == "update"
    assert 0.6 <= old.why["score"] <= 1.0 and new.current


@pytest.mark.parametrize(
    "replies",
    [
        [ChatText("not json at all"), ChatText('{"decisions": [{"candidate": 1}]}')],
        [ChatJson({"decisions": [{"candidate": 1, "relation": "maybe"}]})] * 2,
        [Slow(3.0)] * 2,
    ],
    ids=["malformed", "unknown-relation", "slow"],
)
def test_bad_or_slow_replies_write_the_document_without_model_decisions(
    mem: Memory, fake: FakeOpenAI, db_url: str, replies: list[Any]
) -> None:
    ds = mem.dataset("diet")
    with _client(fake, timeout_s=0.5, max_retries=1) as client:
        _memorize(ds, _chat("2024-01-02T09:00:00+00:00", OLD), client)
        fake.script_chat(*replies)
        report, model = _memorize(ds, _chat("2024-05-02T09:00:00+00:00", NEW), client)
    assert report.documents[0].status == "written"
    assert model.failures == 1
    assert _changes(db_url) == []
    assert ds.stats()["documents"] == 2
