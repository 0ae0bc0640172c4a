"""The llm extraction path against a scripted OpenAI-compatible server (no database)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import openai
import pytest

from memflow.drafts import EpisodeDraft
from memflow.errors import ConfigurationError, ExtractionError
from memflow.llm.client import LlmClient, LlmSettings, Usage, load_prompt
from memflow.llm.extractor import LlmExtractor, lost_anchors, numeric_anchors
from memflow.llm.router import LlmRouter
from memflow.llm.schemas import MergeDecision
from memflow.text.document import Chunk, ParsedDocument, Session
from tests.support.fake_openai import (
    ChatJson,
    ChatText,
    FakeOpenAI,
    HttpError,
    Respond,
    Slow,
)

SESSION_START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
TURNS = [
    ("D1:1", "Wren", "Yesterday I helped at the community garden meeting; we planted apple trees."),
    ("D1:2", "Rosalind", "Great! I ran a fun run on Saturday, 5 km in 31 minutes."),
    ("D1:3", "Wren", "The planning office meeting is on 12 June at 10:30."),
]


def dialog_doc(turns: list[tuple[str, str, str]] = TURNS, sessions: int = 1) -> ParsedDocument:
    chunks: list[Chunk] = []
    session_list: list[Session] = []
    for s in range(sessions):
        start = len(chunks)
        for key, speaker, text in turns:
            session_key = key.replace("D1:", f"D{s + 1}:")
            chunks.append(
                Chunk(index=len(chunks), key=session_key, text=text, speaker=speaker, session=s)
            )
        session_list.append(
            Session(
                index=s,
                started_at=SESSION_START.replace(day=8 + s),
                chunk_indexes=list(range(start, len(chunks))),
            )
        )
    return ParsedDocument(
        source="chat.json",
        title="Wren and Rosalind",
        content_type="conversation",
        text="\n".join(f"{sp}: {t}" for _, sp, t in turns),
        reference_time=SESSION_START,
        chunks=chunks,
        sessions=session_list,
    )


def good_reply() -> dict[str, Any]:
    return {
        "events": [
            {
                "name": "Wren and Rosalind catch up",
                "sources": ["D1:1", "D1:2", "D1:3"],
                "sections": [
                    {
                        "title": "Wren's garden meeting visit",
                        "content": "Wren went to a community garden meeting yesterday "
                        "(7 May 2023) and helped plant apple trees.",
                        "facet_type": "event",
                        "sources": ["D1:1"],
                        "points": [
                            {
                                "text": "Wren attended a community garden meeting on 7 May 2023",
                                "sources": ["D1:1"],
                            }
                        ],
                        "entities": [{"name": "Wren", "role": "attendee"}],
                    },
                    {
                        "title": "Rosalind's fun run",
                        "content": "Rosalind ran a 5 km fun run on Saturday in 31 minutes.",
                        "facet_type": "metric",
                        "sources": ["D1:2"],
                        "points": [
                            {"text": "Rosalind ran a fun run of 5 km", "sources": ["D1:2"]},
                            {"text": "Rosalind finished in 31 minutes", "sources": ["D1:2", "X9"]},
                        ],
                        "entities": [{"name": "Rosalind", "role": "runner"}],
                    },
                    {
                        "title": "Wren's planning office meeting",
                        "content": "Wren meets the planning office on 12 June at 10:30.",
                        "facet_type": "plan",
                        "sources": ["D1:3"],
                        "points": [
                            {
                                "text": "Wren meets the planning office on 12 June at 10:30",
                                "sources": ["D1:3"],
                            }
                        ],
                        "entities": [{"name": "Wren", "role": "prospective parent"}],
                    },
                ],
                "entities": [
                    {
                        "name": "Wren",
                        "entity_type": "person",
                        "description": "A transgender woman who plans to adopt.",
                        "role": "speaker",
                        "aliases": [],
                    },
                    {
                        "name": "Rosalind",
                        "entity_type": "PERSON",
                        "description": "Wren's friend who runs.",
                        "role": "speaker",
                        "aliases": ["Ros"],
                    },
                ],
            }
        ]
    }


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def make_client(fake: FakeOpenAI, **settings: Any) -> LlmClient:
    values: dict[str, Any] = {"base_url": fake.base_url, "model": "test-model", "api_key": "k"}
    values.update(settings)
    return LlmClient(LlmSettings(**values))


@pytest.fixture
def client(fake: FakeOpenAI) -> Iterator[LlmClient]:
    with make_client(fake, timeout_s=5) as c:
        yield c


def tokens(text: str) -> int:
    return max(1, len(text.split()))


# --- good path -------------------------------------------------------------------------------


def test_good_reply_becomes_drafts_with_usage(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(ChatJson(good_reply()))
    drafts, usage = LlmExtractor(client).extract(dialog_doc())

    assert len(drafts) == 1
    draft = drafts[0]
    assert draft.name == "Wren and Rosalind catch up"
    assert [f.search_text for f in draft.facets] == [
        "Wren's garden meeting visit",
        "Rosalind's fun run",
        "Wren's planning office meeting",
    ]
    race = draft.facets[1]
    assert race.facet_type == "metric"
    assert race.anchor_text.startswith("Rosalind ran a 5 km fun run")
    assert [p.search_text for p in race.points] == [
        "Rosalind ran a fun run of 5 km",
        "Rosalind finished in 31 minutes",
    ]
    assert race.points[1].sources == ["D1:2"]  # the unknown key X9 is dropped
    assert race.points[0].description == "Rosalind: " + TURNS[1][2]
    assert race.entities[0].name == "Rosalind"
    assert race.entities[0].role == "runner"
    assert race.entities[0].entity_type == "person"
    assert draft.sources == ["D1:1", "D1:2", "D1:3"]
    assert draft.summary.startswith("【Wren's garden meeting visit】Wren went")
    assert "【Rosalind's fun run】" in draft.summary
    rosalind = next(e for e in draft.entities if e.name == "Rosalind")
    assert rosalind.entity_type == "person"
    assert rosalind.aliases == ["Ros"]
    assert rosalind.description == "Wren's friend who runs."

    request = fake.chat_requests[0]
    assert len(fake.chat_requests) == 1
    assert request.body["model"] == "test-model"
    fmt = request.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["required"] == ["events"]
    assert "[D1:2] Rosalind: Great!" in request.prompt_text
    assert "2023-05-08T13:56" in request.prompt_text
    assert request.headers["authorization"] == "Bearer k"

    # usage is what the server reported, not a local estimate
    assert usage.calls == 1
    assert usage.prompt_tokens == tokens(request.prompt_text)
    assert usage.completion_tokens > 100
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert client.usage == usage


def test_markdown_fenced_json_is_accepted(fake: FakeOpenAI, client: LlmClient) -> None:
    import json

    fake.script_chat(ChatText("```json\n" + json.dumps(good_reply()) + "\n```"))
    drafts, usage = LlmExtractor(client).extract(dialog_doc())
    assert len(drafts[0].facets) == 3
    assert usage.calls == 1


def test_empty_document_makes_no_call(fake: FakeOpenAI, client: LlmClient) -> None:
    doc = dialog_doc().model_copy(update={"chunks": [], "sessions": []})
    drafts, usage = LlmExtractor(client).extract(doc)
    assert drafts == []
    assert usage == Usage()
    assert fake.chat_requests == []


# --- retries and failures --------------------------------------------------------------------


def test_malformed_then_good_succeeds_in_two_calls(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(ChatText('{"events": [ oops'), ChatJson(good_reply()))
    drafts, usage = LlmExtractor(client).extract(dialog_doc())
    assert len(drafts) == 1
    assert usage.calls == 2
    assert len(fake.chat_requests) == 2
    retry = fake.chat_requests[1].messages
    assert retry[-2] == {"role": "assistant", "content": '{"events": [ oops'}
    assert "not valid" in retry[-1]["content"]


def test_schema_invalid_twice_raises(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(ChatJson({"events": []}), ChatText("I cannot do that"))
    with pytest.raises(ExtractionError, match="after 2 attempt"):
        LlmExtractor(client).extract(dialog_doc())
    assert len(fake.chat_requests) == 2
    assert client.usage.calls == 2
    assert client.usage.completion_tokens > 0


def test_truncated_reply_counts_as_malformed(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(ChatText('{"events":', finish_reason="length"), ChatJson(good_reply()))
    drafts, usage = LlmExtractor(client).extract(dialog_doc())
    assert usage.calls == 2
    assert drafts[0].facets
    assert "cut off" in fake.chat_requests[1].messages[-1]["content"]


def test_slow_reply_beyond_timeout_raises(fake: FakeOpenAI) -> None:
    fake.script_chat(Slow(5.0, ChatJson(good_reply())), Slow(5.0, ChatJson(good_reply())))
    with make_client(fake, timeout_s=0.5) as slow_client:
        started = time.monotonic()
        with pytest.raises(ExtractionError, match=r"no reply within 0\.5 s") as info:
            LlmExtractor(slow_client).extract(dialog_doc())
        elapsed = time.monotonic() - started
    assert isinstance(info.value.__cause__, openai.APITimeoutError)
    assert len(fake.chat_requests) == 2
    assert elapsed < 4.0


def test_timeout_then_good_succeeds(fake: FakeOpenAI) -> None:
    fake.script_chat(Slow(5.0, ChatJson(good_reply())), ChatJson(good_reply()))
    with make_client(fake, timeout_s=0.5) as c:
        drafts, usage = LlmExtractor(c).extract(dialog_doc())
    assert len(drafts) == 1
    assert usage.calls == 2


def test_http_500_raises_after_one_retry(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(HttpError(500), HttpError(502), ChatJson(good_reply()))
    with pytest.raises(ExtractionError, match="HTTP 502") as info:
        LlmExtractor(client).extract(dialog_doc())
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(fake.chat_requests) == 2


def test_http_500_then_good_succeeds(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(HttpError(500), ChatJson(good_reply()))
    drafts, usage = LlmExtractor(client).extract(dialog_doc())
    assert len(drafts) == 1
    assert usage.calls == 2


def test_client_error_is_not_retried(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(HttpError(401, "bad key"), ChatJson(good_reply()))
    with pytest.raises(ExtractionError, match="HTTP 401") as info:
        LlmExtractor(client).extract(dialog_doc())
    assert isinstance(info.value.__cause__, openai.AuthenticationError)
    assert len(fake.chat_requests) == 1


def test_unreachable_endpoint_raises_extraction_error() -> None:
    with FakeOpenAI() as gone:
        url = gone.base_url
    with (
        LlmClient(LlmSettings(base_url=url, model="m", timeout_s=1)) as c,
        pytest.raises(ExtractionError, match="cannot connect") as info,
    ):
        LlmExtractor(c).extract(dialog_doc())
    assert isinstance(info.value.__cause__, openai.APIConnectionError)


# --- anchor check ----------------------------------------------------------------------------


def test_anchor_check_reinserts_dropped_numbers(fake: FakeOpenAI, client: LlmClient) -> None:
    reply = good_reply()
    race = reply["events"][0]["sections"][1]
    race["content"] = "Rosalind ran a fun run on Saturday."
    race["points"] = [{"text": "Rosalind ran a fun run", "sources": ["D1:2"]}]
    fake.script_chat(ChatJson(reply))

    drafts, _ = LlmExtractor(client).extract(dialog_doc())
    facet = drafts[0].facets[1]
    assert [p.search_text for p in facet.points] == [
        "Rosalind ran a fun run",
        "Rosalind: " + TURNS[1][2],
    ]
    assert facet.points[-1].sources == ["D1:2"]
    # facets that kept their numbers get nothing appended
    assert len(drafts[0].facets[2].points) == 1


def test_anchor_check_attaches_uncited_lines_with_numbers(
    fake: FakeOpenAI, client: LlmClient
) -> None:
    reply = good_reply()
    del reply["events"][0]["sections"][2]  # nobody covers the agency meeting on 12 June
    fake.script_chat(ChatJson(reply))

    drafts, _ = LlmExtractor(client).extract(dialog_doc())
    texts = [p.search_text for f in drafts[0].facets for p in f.points]
    assert "Wren: " + TURNS[2][2] in texts
    owner = next(f for f in drafts[0].facets if any("12 June" in p.search_text for p in f.points))
    assert "D1:3" in owner.sources


def test_anchor_helpers() -> None:
    assert numeric_anchors("It cost $1,500 on 2023-05-08, 2.50 each") == {
        "1500",
        "2023",
        "5",
        "8",
        "2.5",
    }
    assert lost_anchors("She has 2 kids", "She has two children") == set()
    assert lost_anchors("The P99 target is 500 ms", "P99 latency must be low") == {"500"}
    assert lost_anchors("We chose PostgreSQL over MySQL", "The team chose postgresql") == {"MySQL"}
    # Latin terms inside CJK text are names; the sentence's first word is not taken as one
    assert lost_anchors("P99延迟必须低于500毫秒，暂定PostgreSQL", "延迟目标讨论") == {
        "99",
        "500",
        "PostgreSQL",
    }
    assert lost_anchors("P99延迟必须低于500毫秒", "P99 延迟 < 500ms") == set()


# --- windows and concurrency -----------------------------------------------------------------


def reply_for_prompt(body: dict[str, Any]) -> dict[str, Any]:
    prompt = "\n".join(m["content"] for m in body["messages"])
    keys = re.findall(r"^\[([^\]]+)\]", prompt, flags=re.MULTILINE)
    first = keys[0].split(":")[0]
    return {
        "events": [
            {
                "name": f"Event {first}",
                "sources": keys,
                "sections": [
                    {
                        "title": f"Talk in {first}",
                        "content": "They talked.",
                        "facet_type": "topic",
                        "sources": keys,
                        "points": [],
                        "entities": [],
                    }
                ],
                "entities": [],
            }
        ]
    }


def test_one_call_per_session_within_concurrency_limit(fake: FakeOpenAI) -> None:
    fake.set_default("/v1/chat/completions", Respond(reply_for_prompt, delay=0.3))
    with make_client(fake, timeout_s=5, max_concurrency=2) as c:
        drafts, usage = LlmExtractor(c).extract(dialog_doc(sessions=4))
    assert usage.calls == 4
    assert [d.name for d in drafts] == ["Event D1", "Event D2", "Event D3", "Event D4"]
    assert drafts[2].sources == ["D3:1", "D3:2", "D3:3"]
    # each session is anchored at its own start time
    assert any("2023-05-10T13:56" in r.prompt_text for r in fake.chat_requests)
    assert fake.max_in_flight() == 2


def test_client_semaphore_bounds_parallel_calls(fake: FakeOpenAI) -> None:
    fake.set_default(
        "/v1/chat/completions", Respond(lambda _: {"same_event": False, "reason": "x"}, 0.2)
    )
    errors: list[BaseException] = []
    with make_client(fake, timeout_s=5, max_concurrency=3) as c:

        def call() -> None:
            try:
                c.complete_json([{"role": "user", "content": "q"}], MergeDecision)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert c.usage.calls == 8
    assert errors == []
    assert fake.max_in_flight() == 3


def test_long_text_is_split_into_windows(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.set_default("/v1/chat/completions", Respond(reply_for_prompt))
    chunks = [
        Chunk(index=i, key=f"s{i}", text=f"Sentence number {i} says something useful here.")
        for i in range(20)
    ]
    doc = ParsedDocument(
        source="notes.txt",
        title="Notes",
        content_type="text",
        text=" ".join(c.text for c in chunks),
        reference_time=SESSION_START,
        chunks=chunks,
    )
    drafts, usage = LlmExtractor(client, max_chars_per_call=400).extract(doc)
    assert usage.calls == len(fake.chat_requests) >= 3
    cited = [k for d in drafts for k in d.sources]
    assert cited == [f"s{i}" for i in range(20)]  # every chunk once, in order


# --- router and settings ---------------------------------------------------------------------


def test_router_asks_and_follows_the_model(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(
        ChatJson({"same_event": True, "reason": "same race"}),
        ChatJson({"same_event": False, "reason": "different day"}),
    )
    router = LlmRouter(client)
    new = EpisodeDraft(name="Race results", summary="Rosalind finished the 5 km race in 31 min.")
    assert router.should_merge(new, "Rosalind's fun run", "Rosalind ran a race.") is True
    assert router.should_merge(new, "Wren's planning visit", "Agency meeting.") is False
    prompt = fake.chat_requests[0].prompt_text
    assert "Rosalind's fun run" in prompt
    assert "finished the 5 km race" in prompt
    assert router.usage.calls == 2


def test_router_malformed_twice_raises(fake: FakeOpenAI, client: LlmClient) -> None:
    fake.script_chat(ChatJson({"same": "yes"}), ChatJson({"same": "yes"}))
    new = EpisodeDraft(name="n", summary="s")
    with pytest.raises(ExtractionError):
        LlmRouter(client).should_merge(new, "c", "s")


def test_settings_from_env_arguments_win() -> None:
    env = {
        "MEMFLOW_LLM_BASE_URL": "http://env:1/v1",
        "MEMFLOW_LLM_MODEL": "env-model",
        "OPENAI_API_KEY": "openai-key",
    }
    s = LlmSettings.from_env(env)
    assert (s.base_url, s.model, s.api_key) == ("http://env:1/v1", "env-model", "openai-key")
    s = LlmSettings.from_env({**env, "MEMFLOW_LLM_API_KEY": "memflow-key"}, model="arg-model")
    assert (s.model, s.api_key) == ("arg-model", "memflow-key")
    assert LlmSettings.configured(env) and not LlmSettings.configured({})


def test_settings_read_process_env_only_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMFLOW_LLM_MODEL", raising=False)
    with pytest.raises(ConfigurationError, match="MEMFLOW_LLM_MODEL"):
        LlmSettings.from_env()
    monkeypatch.setenv("MEMFLOW_LLM_MODEL", "late-model")
    assert LlmSettings.from_env().model == "late-model"
    with pytest.raises(ConfigurationError, match="invalid LLM settings"):
        LlmSettings.from_env(timeout_s=-1)


def test_openai_without_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEMFLOW_LLM_API_KEY", "OPENAI_API_KEY", "MEMFLOW_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        LlmClient(model="gpt-4o-mini")


def test_prompts_load_by_name() -> None:
    assert "JSON" in load_prompt("extract_system")
    text = load_prompt(
        "extract_user", reference_time="T", title="X", content_type="text", lines="[s0] hi"
    )
    assert "[s0] hi" in text
    with pytest.raises(ConfigurationError, match="missing"):
        load_prompt("no_such_prompt")
    with pytest.raises(ConfigurationError, match="needs a value"):
        load_prompt("extract_user", title="X")
