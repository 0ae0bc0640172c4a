"""memflow.integrations.llama_index against llama-index-core: NodeWithScore results in
Dataset.search's order, scores, metadata kept out of the model's text, the search keywords, and
the async path."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, QueryBundle

from memflow import AsyncDataset, ConfigurationError, Dataset, InvalidInput
from memflow.integrations.llama_index import MemflowRetriever

from .conftest import QUERIES


@pytest.mark.parametrize(
    "keywords", [{}, {"display": "summary", "top_k": 3}, {"budget_tokens": 10, "mode": "vector"}]
)
def test_the_same_episodes_in_the_same_order_as_dataset_search(
    ds: Dataset, keywords: dict[str, Any]
) -> None:
    retriever = MemflowRetriever(ds, **keywords)
    for query in QUERIES:
        found = retriever.retrieve(query)
        resp = ds.search(query, **retriever.search)
        assert all(isinstance(n, NodeWithScore) for n in found)
        assert [n.node.node_id for n in found] == [str(r.episode_id) for r in resp.results]
        assert [n.node.get_content() for n in found] == [r.context for r in resp.results]
        assert [n.score for n in found] == [-r.score for r in resp.results]
        assert len(found) > 1
    assert retriever.search["display"] == keywords.get("display", "highly_related")


def test_nodes_carry_metadata_outside_the_model_text(ds: Dataset) -> None:
    [best, *_] = MemflowRetriever(ds, display="summary").retrieve("When is Ada's birthday?")
    node = best.node
    assert "14 July" in node.get_content()
    assert node.get_content(metadata_mode=MetadataMode.LLM) == node.get_content()
    assert node.metadata["citations"][0]["source"] == "note-0"
    assert node.metadata["score"] == -(best.score or 0)
    source = node.relationships[NodeRelationship.SOURCE]
    assert source.node_id == node.metadata["citations"][0]["document_id"]
    scores = [n.score or 0 for n in MemflowRetriever(ds).retrieve("Porto offsite")]
    assert scores == sorted(scores, reverse=True)  # higher first, as LlamaIndex expects


def test_keywords_are_checked_and_can_change(ds: Dataset) -> None:
    with pytest.raises(InvalidInput, match="unknown search keyword"):
        MemflowRetriever(ds, similarity_top_k=3)
    retriever = MemflowRetriever(ds)
    retriever.search["top_k"] = 2
    assert len(retriever.retrieve(QueryBundle("Who owns the database migration?"))) == 2
    with pytest.raises(ConfigurationError, match=r"memflow\.Dataset"):
        MemflowRetriever().retrieve("anything")


@pytest.mark.asyncio
async def test_aretrieve_runs_the_async_search(ds: Dataset, ads: AsyncDataset) -> None:
    retriever = MemflowRetriever(async_dataset=ads, top_k=4)
    for query in QUERIES:
        found = await retriever.aretrieve(query)
        resp = await ads.search(query, **retriever.search)
        assert [n.node.node_id for n in found] == [str(r.episode_id) for r in resp.results]
        sync = MemflowRetriever(ds, top_k=4).retrieve(query)
        assert [n.node.node_id for n in sync] == [n.node.node_id for n in found]
    with pytest.raises(ConfigurationError, match="async_dataset="):
        await MemflowRetriever(ds).aretrieve("anything")
