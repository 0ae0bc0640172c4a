"""LangChain: a retriever over a memflow dataset, and a tool that memorises a conversation turn.

``pip install 'memflow[langchain]'`` (langchain-core); docs/integrations/langchain.md.

>>> retriever = MemflowRetriever(dataset=mem.dataset("notes"), budget_tokens=300)
>>> docs = retriever.invoke("When is the release?")          # one Document per episode

``invoke`` runs :meth:`memflow.Dataset.search`; ``ainvoke`` runs
:meth:`memflow.AsyncDataset.search` on the event loop (give ``async_dataset=``). Each
:class:`~langchain_core.documents.Document` is one result, in the search's order: its
``page_content`` is the result's part of the search's context (empty when the budget left no room
for it), its ``id`` the episode id, its metadata the citations, score and validity
(:func:`memflow.integrations.common.result_metadata`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memflow.aio import AsyncDataset
from memflow.ingest.report import MemorizeReport
from memflow.integrations.common import (
    DEFAULT_DISPLAY,
    SEARCH_KEYWORDS,
    missing_extra,
    require,
    result_metadata,
    search_keywords,
    turn_document,
)
from memflow.memory import Dataset
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.types import SearchResponse

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        AsyncCallbackManagerForToolRun,
        CallbackManagerForRetrieverRun,
        CallbackManagerForToolRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import ArgsSchema, BaseTool
except ImportError as exc:  # pragma: no cover - the extra is part of the test install
    raise missing_extra("langchain", "langchain-core") from exc

NEEDS_DATASET = "{cls} needs dataset=mem.dataset(NAME) for {call} (a memflow.Dataset)"
NEEDS_ASYNC = (
    "{cls} needs async_dataset=amem.dataset(NAME) for {call} (a memflow.AsyncDataset of an open "
    "AsyncMemory): its async path runs on the event loop, not in a thread"
)


def documents(response: SearchResponse) -> list[Document]:
    """One Document per result of ``response``, in rank order."""
    return [
        Document(
            page_content=r.context, metadata=result_metadata(r, response), id=str(r.episode_id)
        )
        for r in response.results
    ]


class MemflowRetriever(BaseRetriever):
    """A LangChain retriever over one memflow dataset.

    Every keyword of :meth:`memflow.Dataset.search` is a field (``top_k``, ``mode``,
    ``display``, ``budget_tokens``, ``now``, ``config``, ``as_of``, ``include_history``,
    ``scope``, ``where``) and can be overridden per call: ``retriever.invoke(q, top_k=3,
    scope={"user": "u1"})``. ``display`` defaults to ``highly_related`` (the facts most related
    to the query, packed into ``budget_tokens``), as memflow's HTTP and MCP doors do."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    dataset: Dataset | None = None
    async_dataset: AsyncDataset | None = None

    top_k: int | None = None
    mode: SearchMode | None = None
    display: DisplayMode | None = DEFAULT_DISPLAY
    budget_tokens: int | None = None
    now: datetime | None = None
    config: RecallConfig | None = None
    as_of: datetime | None = None
    include_history: bool = False
    scope: dict[str, str] | None = None
    where: dict[str, Any] | None = None

    def search_keywords(self, **overrides: Any) -> dict[str, Any]:
        """The keywords this retriever passes to ``Dataset.search``, with ``overrides``."""
        return search_keywords({k: getattr(self, k) for k in SEARCH_KEYWORDS}, overrides)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        ds = require(self.dataset, NEEDS_DATASET.format(cls=type(self).__name__, call="invoke"))
        return documents(ds.search(query, **self.search_keywords(**kwargs)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        ads = require(
            self.async_dataset, NEEDS_ASYNC.format(cls=type(self).__name__, call="ainvoke")
        )
        return documents(await ads.search(query, **self.search_keywords(**kwargs)))


class TurnInput(BaseModel):
    """What the model passes to :class:`MemorizeTurnTool`."""

    text: str = Field(description="what was said, in the speaker's own words")
    speaker: str = Field(default="user", description="who said it (a name, or 'user')")


def _outcome(report: MemorizeReport, text: str) -> tuple[str, dict[str, Any]]:
    doc = report.documents[0]
    artifact = {
        "status": doc.status,
        "document_id": str(doc.id) if doc.id else None,
        "episode_ids": [str(e) for e in report.episode_ids],
    }
    if doc.status == "skipped":
        return f"Already remembered: {text}", artifact
    return f"Remembered: {text}", artifact


class MemorizeTurnTool(BaseTool):
    """A tool the model calls to remember one conversation turn (``text`` said by
    ``speaker``, now). It is memorised as a one-message conversation in the dataset, with the
    tool's ``scope`` and ``document_metadata``; the tool message says what was remembered and its artifact
    carries the document and episode ids."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "memorize_turn"
    description: str = (
        "Remember something the user (or another speaker) said, in long-term memory, so it can "
        "be recalled in later conversations. Pass the statement in the speaker's own words."
    )
    args_schema: ArgsSchema | None = TurnInput
    response_format: str = "content_and_artifact"  # type: ignore[assignment]

    dataset: Dataset | None = None
    async_dataset: AsyncDataset | None = None
    scope: dict[str, str] | None = None
    # stored on each memorised document (``metadata`` is LangChain's, for callbacks)
    document_metadata: dict[str, Any] | None = None
    source: str = "langchain"  # the documents' source: what their citations name

    def _run(
        self,
        text: str,
        speaker: str = "user",
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        ds = require(self.dataset, NEEDS_DATASET.format(cls=type(self).__name__, call="invoke"))
        doc = turn_document(text, speaker=speaker, source=self.source)
        return _outcome(ds.memorize(doc, scope=self.scope, metadata=self.document_metadata), text)

    async def _arun(
        self,
        text: str,
        speaker: str = "user",
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        ads = require(
            self.async_dataset, NEEDS_ASYNC.format(cls=type(self).__name__, call="ainvoke")
        )
        doc = turn_document(text, speaker=speaker, source=self.source)
        return _outcome(
            await ads.memorize(doc, scope=self.scope, metadata=self.document_metadata), text
        )


__all__ = ["MemflowRetriever", "MemorizeTurnTool", "TurnInput", "documents"]
