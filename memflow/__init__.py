"""memflow: episodic memory for AI agents, entirely in PostgreSQL + pgvector.

>>> import memflow
>>> with memflow.Memory.open() as mem:            # embedded PostgreSQL unless MEMFLOW_DATABASE_URL
...     ds = mem.dataset("notes")
...     ds.memorize("meeting.md")
...     hits = ds.search("what did we decide about the database?")
"""

from typing import TYPE_CHECKING, Any

from memflow.config import ReadConsistency, ReplicaSettings
from memflow.context import FaultHook, StoreContext
from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, PointDraft, TimeSpan
from memflow.embed.base import Embedder
from memflow.errors import (
    ConfigurationError,
    ConnectionFailed,
    DatabaseError,
    EmbedderMismatch,
    EmbeddingDimensionMismatch,
    EmbeddingError,
    ExtensionMissing,
    ExtractionError,
    InvalidInput,
    MemflowError,
    NotFound,
    SchemaOutOfDate,
)
from memflow.ingest.options import ExtractorChoice, MemorizeOptions
from memflow.ingest.pipeline import ProgressFn, Source
from memflow.ingest.progress import ProgressCallback, ProgressEvent
from memflow.ingest.report import DocumentReport, MemorizeReport
from memflow.ingest.route import RouteSettings
from memflow.memory import Dataset, DatasetInfo, Memory
from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
from memflow.recall.types import Citation, ContextUnit, PathStep, SearchResponse, SearchResult
from memflow.store.conflicts import ConflictSettings
from memflow.store.dump import DumpFile, DumpProgress, DumpProgressFn, ExportReport, ImportReport
from memflow.store.forget import ForgetReport
from memflow.store.history import DocumentVersion, HistoryChange, HistoryEntry
from memflow.store.writer import WriteResult
from memflow.text.document import Chunk, ParsedDocument

if TYPE_CHECKING:
    from memflow.aio import AsyncDataset, AsyncMemory
    from memflow.llm.client import LlmClient, LlmSettings

__version__ = "0.1.0"

# Imported on first use: the LLM client loads the openai package (~1 s), which memflow without
# an LLM never needs.
# The async API loads SQLAlchemy's asyncio extension and greenlet, which sync code never needs.
_LAZY = {
    "AsyncDataset": "memflow.aio",
    "AsyncMemory": "memflow.aio",
    "LlmClient": "memflow.llm.client",
    "LlmSettings": "memflow.llm.client",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'memflow' has no attribute {name!r}")


__all__ = [
    "AsyncDataset",
    "AsyncMemory",
    "Chunk",
    "Citation",
    "ConfigurationError",
    "ConflictSettings",
    "ConnectionFailed",
    "ContextUnit",
    "DatabaseError",
    "Dataset",
    "DatasetInfo",
    "DisplayMode",
    "DocumentReport",
    "DocumentVersion",
    "DumpFile",
    "DumpProgress",
    "DumpProgressFn",
    "Embedder",
    "EmbedderMismatch",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "EntityDraft",
    "EpisodeDraft",
    "ExportReport",
    "ExtensionMissing",
    "ExtractionError",
    "ExtractorChoice",
    "FacetDraft",
    "FaultHook",
    "ForgetReport",
    "HistoryChange",
    "HistoryEntry",
    "ImportReport",
    "InvalidInput",
    "LlmClient",
    "LlmSettings",
    "MemflowError",
    "MemorizeOptions",
    "MemorizeReport",
    "Memory",
    "NotFound",
    "ParsedDocument",
    "PathStep",
    "PointDraft",
    "ProgressCallback",
    "ProgressEvent",
    "ProgressFn",
    "ReadConsistency",
    "RecallConfig",
    "ReplicaSettings",
    "RouteSettings",
    "SchemaOutOfDate",
    "SearchMode",
    "SearchResponse",
    "SearchResult",
    "Source",
    "StoreContext",
    "TimeSpan",
    "WriteResult",
    "__version__",
]
