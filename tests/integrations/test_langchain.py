"""memflow.integrations.langchain against langchain-core: LangChain's standard retriever tests,
the same episodes as Dataset.search, metadata (citations, validity), the search keywords, and
the tool that memorises a turn, through the sync and the async API."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_tests.integration_tests import RetrieversIntegrationTests

from memflow import (
    AsyncDataset,
    AsyncMemory,
    ConfigurationError,
    Dataset,
    InvalidInput,
    Memory,
)
from memflow.embed.hash import HashEmbedder
from memflow.integrations.common import SEARCH_KEYWORDS
from memflow.integrations.langchain import MemflowRetriever, MemorizeTurnTool

from .conftest import DATASET, QUERIES, memorize_notes

# pytest-asyncio runs in strict mode here: mark the one async standard test. The mark is stored
# on the function object itself, so the subclass below still overrides nothing.
pytest.mark.asyncio(RetrieversIntegrationTests.test_ainvoke_returns_documents)


class TestStandardRetrieverTests(RetrieversIntegrationTests):
    """langchain-tests' standard retriever tests, on the test database."""

    @pytest_asyncio.fixture(autouse=True)
    async def _stored(self, mem: Memory, db_url: str) -> AsyncIterator[None]:
        ds = mem.dataset(DATASET)
        memorize_notes(ds)
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as amem:
            self._params = {"dataset": ds, "async_dataset": amem.dataset(DATASET)}
            yield

    @property
    def retriever_constructor(self) -> type[MemflowRetriever]:
        return MemflowRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self._params

    @property
    def retriever_query_example(self) -> str:
        return "When is Ada's birthday?"

    @property
    def num_results_arg_name(self) -> str:
        return "top_k"


def test_the_retriever_forwards_every_keyword_of_dataset_search() -> None:
    """SEARCH_KEYWORDS is Dataset.search's keyword list, and each is a retriever field (when
    search grows a keyword, this says where the adapters need it)."""
    keywords = [
        p.name
        for p in inspect.signature(Dataset.search).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert list(SEARCH_KEYWORDS) == keywords
    assert set(SEARCH_KEYWORDS) <= set(MemflowRetriever.model_fields)


CASES: list[dict[str, Any]] = [
    {},
    {"display": "summary"},
    {"display": "detail", "top_k": 3},
    {"budget_tokens": 12},
    {"mode": "vector"},
]


@pytest.mark.parametrize("keywords", CASES)
def test_the_same_episodes_in_the_same_order_as_dataset_search(
    ds: Dataset, keywords: dict[str, Any]
) -> None:
    retriever = MemflowRetriever(dataset=ds)
    for query in QUERIES:
        docs = retriever.invoke(query, **keywords)
        resp = ds.search(query, **retriever.search_keywords(**keywords))
        assert [d.id for d in docs] == [str(r.episode_id) for r in resp.results]
        assert [d.page_content for d in docs] == [r.context for r in resp.results]
        assert [d.metadata["score"] for d in docs] == [r.score for r in resp.results]
        assert len(docs) > 1


@pytest.mark.asyncio
async def test_ainvoke_runs_the_async_search_with_the_same_results(
    ds: Dataset, ads: AsyncDataset
) -> None:
    retriever = MemflowRetriever(async_dataset=ads, top_k=4, budget_tokens=40)
    for query in QUERIES:
        docs = await retriever.ainvoke(query)
        resp = await ads.search(query, **retriever.search_keywords())
        assert [d.id for d in docs] == [str(r.episode_id) for r in resp.results]
        assert [d.page_content for d in docs] == [r.context for r in resp.results]
        sync = MemflowRetriever(dataset=ds, top_k=4, budget_tokens=40).invoke(query)
        assert [d.id for d in sync] == [d.id for d in docs]


@pytest.mark.asyncio
async def test_each_path_needs_its_own_dataset(ds: Dataset, ads: AsyncDataset) -> None:
    with pytest.raises(ConfigurationError, match="async_dataset="):
        await MemflowRetriever(dataset=ds).ainvoke("When is Ada's birthday?")
    with pytest.raises(ConfigurationError, match="dataset="):
        await MemorizeTurnTool(dataset=ds).ainvoke({"text": "Ada moved to Lyon."})
    assert await ads.stats() == ds.stats()  # nothing written by the refused tool call


def test_budget_display_and_unknown_keywords(ds: Dataset) -> None:
    retriever = MemflowRetriever(dataset=ds, top_k=5, display="summary")
    small = retriever.invoke("When is Ada's birthday?", budget_tokens=30)
    large = retriever.invoke("When is Ada's birthday?", budget_tokens=2000)
    assert [d.id for d in small] == [d.id for d in large]
    words = [sum(len(d.page_content.split()) for d in docs) for docs in (small, large)]
    assert 0 < words[0] < words[1]
    assert "14 July" in large[0].page_content
    assert any(not d.page_content for d in small)  # what did not fit is left out, not cut
    assert all(d.page_content.startswith("[") for d in large)  # every episode block shown
    with pytest.raises(InvalidInput, match=r"unknown search keyword.*k"):
        retriever.invoke("When is Ada's birthday?", k=2)


def chat(day: str, speaker: str, text: str) -> str:
    return json.dumps(
        {"sessions": [{"started_at": day, "messages": [{"speaker": speaker, "text": text}]}]}
    )


def test_metadata_carries_citations_and_validity(mem: Memory) -> None:
    ds = mem.dataset("facts")
    old = ds.memorize(chat("2023-01-10T09:00:00+00:00", "Mia", "I live in Boston."))
    new = ds.memorize(chat("2023-03-09T09:00:00+00:00", "Mia", "We moved to Seattle last week!"))
    docs = MemflowRetriever(dataset=ds).invoke("Where does Mia live?")
    by_doc = {d.metadata["citations"][0]["document_id"]: d for d in docs}
    boston, seattle = by_doc[str(old.documents[0].id)], by_doc[str(new.documents[0].id)]
    assert boston.metadata["replaced"] is True and seattle.metadata["replaced"] is False
    [unit] = boston.metadata["units"]
    assert unit["invalid_at"].startswith("2023-03-09")
    assert unit["superseded_by"] == seattle.metadata["units"][0]["node_id"]
    assert "[superseded, valid until 2023-03-09]" in boston.page_content
    assert seattle.metadata["citations"][0]["key"] == "t0"
    assert seattle.metadata["source"] == "<text>"
    assert seattle.metadata["valid_at"] is not None
    assert seattle.metadata["score_meaning"].startswith("cost")
    json.dumps([d.metadata for d in docs])  # plain JSON: serialisable anywhere
    # as_of: on 1 February memflow had not learned of Seattle, and Boston still held
    then = MemflowRetriever(
        dataset=ds, as_of=datetime(2023, 2, 1, tzinfo=UTC), display="summary"
    ).invoke("Where does Mia live?")
    assert [d.metadata["name"] for d in then] == [boston.metadata["name"]]
    assert then[0].metadata["replaced"] is False


def test_scope_and_where_reach_the_search(mem: Memory) -> None:
    ds = mem.dataset("assistant")
    ds.memorize("Lena prefers window seats on long flights.", scope={"user": "lena"},
                metadata={"topic": "travel"})  # fmt: skip
    ds.memorize("Omar prefers aisle seats on long flights.", scope={"user": "omar"},
                metadata={"topic": "travel"})  # fmt: skip
    ds.memorize("Lena is allergic to peanuts.", scope={"user": "lena"}, metadata={"topic": "food"})
    retriever = MemflowRetriever(dataset=ds, scope={"user": "lena"})
    lena = retriever.invoke("Which seat does she prefer on flights?")
    assert {d.metadata["scope"]["user"] for d in lena} == {"lena"}
    assert len(lena) == 2
    travel = retriever.invoke("Which seat does she prefer?", where={"topic": "travel"})
    assert [d.metadata["metadata"]["topic"] for d in travel] == ["travel"]
    everyone = MemflowRetriever(dataset=ds).invoke("Which seat does she prefer on flights?")
    assert {d.metadata["scope"]["user"] for d in everyone} == {"lena", "omar"}


def test_the_tool_memorises_a_turn(mem: Memory) -> None:
    ds = mem.dataset("turns")
    tool = MemorizeTurnTool(
        dataset=ds, scope={"user": "ada"}, document_metadata={"channel": "chat"}
    )
    assert tool.tool_call_schema.model_json_schema()["required"] == ["text"]
    call = {
        "type": "tool_call",
        "id": "call-1",
        "name": tool.name,
        "args": {"text": "My sister's birthday is on 14 July.", "speaker": "Ada"},
    }
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.content == "Remembered: My sister's birthday is on 14 July."
    assert message.artifact["status"] == "written"
    hit = ds.search("When is the birthday of Ada's sister?", display="highly_related")
    best = hit.results[0]
    assert str(best.episode_id) in message.artifact["episode_ids"]
    assert best.citations[0].source == "langchain"
    assert best.scope == {"user": "ada"} and best.metadata == {"channel": "chat"}
    assert "Ada: My sister's birthday is on 14 July." in hit.context
    # a text that names a file is memorised as text, never read
    tool.invoke({"text": "README.md", "speaker": "Ada"})
    assert "README.md" in ds.search("README.md", display="highly_related").context


@pytest.mark.asyncio
async def test_the_tool_memorises_through_the_async_api(ads: AsyncDataset) -> None:
    tool = MemorizeTurnTool(async_dataset=ads, source="agent-chat")
    out = await tool.ainvoke({"text": "The garage code is 4471.", "speaker": "Ines"})
    assert out == "Remembered: The garage code is 4471."
    resp = await ads.search("What is the garage code?", display="highly_related")
    assert "Ines: The garage code is 4471." in resp.context
    assert resp.results[0].citations[0].source == "agent-chat"
    assert isinstance(uuid.UUID(str(resp.results[0].episode_id)), uuid.UUID)


def test_documents_are_langchain_documents(ds: Dataset) -> None:
    [doc] = MemflowRetriever(dataset=ds, top_k=1, display="summary").invoke("Porto offsite")
    assert isinstance(doc, Document)
    assert doc.metadata["rank"] == 1 and doc.metadata["kind"] == "episode"
    assert uuid.UUID(doc.metadata["episode_id"]) == uuid.UUID(doc.id or "")
    assert doc.metadata["citations"][0]["source"] == "note-3"
