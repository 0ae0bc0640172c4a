"""LlamaIndex: a retriever over a memflow dataset.

``pip install 'memflow[llama-index]'`` (llama-index-core); docs/integrations/llama_index.md.

>>> retriever = MemflowRetriever(mem.dataset("notes"), budget_tokens=300)
>>> nodes = retriever.retrieve("When is the release?")   # one NodeWithScore per episode

``retrieve`` runs :meth:`memflow.Dataset.search`, ``aretrieve`` :meth:`memflow.AsyncDataset.search`
on the event loop (give ``async_dataset=``). Each node is one result, in the search's order: its
text is the result's part of the search's context, its id the episode id, its metadata the
citations, memflow's score and validity (:func:`memflow.integrations.common.result_metadata`;
kept out of the text LlamaIndex shows a model). ``NodeWithScore.score`` is minus memflow's score:
memflow's is a cost (lower is better), LlamaIndex ranks higher scores first.
"""

from __future__ import annotations

from typing import Any

from memflow.aio import AsyncDataset
from memflow.integrations.common import (
    DEFAULT_DISPLAY,
    missing_extra,
    require,
    result_metadata,
    search_keywords,
)
from memflow.memory import Dataset
from memflow.recall.types import SearchResponse

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as exc:  # pragma: no cover - the extra is part of the test install
    raise missing_extra("llama-index", "llama-index-core") from exc


def nodes(response: SearchResponse) -> list[NodeWithScore]:
    """One NodeWithScore per result of ``response``, in rank order."""
    out = []
    for r in response.results:
        meta = result_metadata(r, response)
        node = TextNode(
            id_=str(r.episode_id),
            text=r.context,
            metadata=meta,
            excluded_llm_metadata_keys=list(meta),
            excluded_embed_metadata_keys=list(meta),
        )
        if r.citations:
            source = RelatedNodeInfo(node_id=str(r.citations[0].document_id))
            node.relationships[NodeRelationship.SOURCE] = source
        out.append(NodeWithScore(node=node, score=-r.score))
    return out


class MemflowRetriever(BaseRetriever):
    """A LlamaIndex retriever over one memflow dataset: ``dataset`` for ``retrieve``,
    ``async_dataset`` for ``aretrieve``.

    The keyword arguments are those of :meth:`memflow.Dataset.search` (``top_k``, ``mode``,
    ``display``, ``budget_tokens``, ``now``, ``config``, ``as_of``, ``include_history``,
    ``scope``, ``where``); ``display`` defaults to ``highly_related``, as memflow's HTTP and MCP
    doors do. ``search`` holds them and may be changed between calls."""

    def __init__(
        self,
        dataset: Dataset | None = None,
        *,
        async_dataset: AsyncDataset | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **search: Any,
    ) -> None:
        self.dataset = dataset
        self.async_dataset = async_dataset
        self.search: dict[str, Any] = search_keywords({"display": DEFAULT_DISPLAY}, search)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ds = require(
            self.dataset,
            "MemflowRetriever needs a memflow.Dataset for retrieve: MemflowRetriever(mem.dataset(NAME))",
        )
        return nodes(ds.search(query_bundle.query_str, **search_keywords(self.search)))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ads = require(
            self.async_dataset,
            "MemflowRetriever needs async_dataset=amem.dataset(NAME) for aretrieve (a "
            "memflow.AsyncDataset of an open AsyncMemory): its async path runs on the event loop",
        )
        return nodes(await ads.search(query_bundle.query_str, **search_keywords(self.search)))


__all__ = ["MemflowRetriever", "nodes"]
