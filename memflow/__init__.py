"""memflow: episodic memory for AI agents, entirely in PostgreSQL + pgvector.

>>> import memflow
>>> with memflow.Memory.open() as mem:            # embedded PostgreSQL unless MEMFLOW_DATABASE_URL
...     ds = mem.dataset("notes")
...     ds.memorize("meeting.md")
...     hits = ds.search("what did we decide about the database?")
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy and IDEs see; at run time each name loads on first use (_LAZY)
    from memflow.aio import AsyncDataset, AsyncMemory
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
    from memflow.ingest.inputs import InputDocument, Source
    from memflow.ingest.options import ExtractorChoice, MemorizeOptions
    from memflow.ingest.pipeline import MemorizeKeywords, ProgressFn
    from memflow.ingest.progress import ProgressCallback, ProgressEvent
    from memflow.ingest.report import DocumentReport, MemorizeReport
    from memflow.ingest.route import RouteSettings
    from memflow.llm.client import LlmClient, LlmSettings
    from memflow.memory import Dataset, DatasetInfo, Memory
    from memflow.recall.config import DisplayMode, RecallConfig, SearchMode
    from memflow.recall.options import MultiSearchKeywords, SearchKeywords, SearchOptions
    from memflow.recall.types import Citation, ContextUnit, PathStep, SearchResponse, SearchResult
    from memflow.store.conflicts import ConflictSettings
    from memflow.store.dump import (
        DumpFile,
        DumpProgress,
        DumpProgressFn,
        ExportReport,
        ImportReport,
    )
    from memflow.store.forget import ForgetReport
    from memflow.store.history import DocumentVersion, HistoryChange, HistoryEntry
    from memflow.store.writer import WriteResult
    from memflow.text.document import Chunk, ParsedDocument

__version__ = "0.1.0"

# Every public name loads its module on first use (PEP 562): `import memflow` stays cheap, and
# `memflow --version` never loads SQLAlchemy, psycopg, numpy or the openai package.
# tests/unit/test_public_api.py checks this map against the imports above and __all__.
_MODULES = {
    "memflow.aio": "AsyncDataset AsyncMemory",
    "memflow.config": "ReadConsistency ReplicaSettings",
    "memflow.context": "FaultHook StoreContext",
    "memflow.drafts": "EntityDraft EpisodeDraft FacetDraft PointDraft TimeSpan",
    "memflow.embed.base": "Embedder",
    "memflow.errors": "ConfigurationError ConnectionFailed DatabaseError EmbedderMismatch "
    "EmbeddingDimensionMismatch EmbeddingError ExtensionMissing ExtractionError InvalidInput "
    "MemflowError NotFound SchemaOutOfDate",
    "memflow.ingest.options": "ExtractorChoice MemorizeOptions",
    "memflow.ingest.inputs": "InputDocument Source",
    "memflow.ingest.pipeline": "MemorizeKeywords ProgressFn",
    "memflow.ingest.progress": "ProgressCallback ProgressEvent",
    "memflow.ingest.report": "DocumentReport MemorizeReport",
    "memflow.ingest.route": "RouteSettings",
    "memflow.llm.client": "LlmClient LlmSettings",
    "memflow.memory": "Dataset DatasetInfo Memory",
    "memflow.recall.config": "DisplayMode RecallConfig SearchMode",
    "memflow.recall.options": "MultiSearchKeywords SearchKeywords SearchOptions",
    "memflow.recall.types": "Citation ContextUnit PathStep SearchResponse SearchResult",
    "memflow.store.conflicts": "ConflictSettings",
    "memflow.store.dump": "DumpFile DumpProgress DumpProgressFn ExportReport ImportReport",
    "memflow.store.forget": "ForgetReport",
    "memflow.store.history": "DocumentVersion HistoryChange HistoryEntry",
    "memflow.store.writer": "WriteResult",
    "memflow.text.document": "Chunk ParsedDocument",
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names.split()}


if not TYPE_CHECKING:  # hidden from mypy, which would otherwise take any memflow.X as Any

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'memflow' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "InputDocument",
    "InvalidInput",
    "LlmClient",
    "LlmSettings",
    "MemflowError",
    "MemorizeKeywords",
    "MemorizeOptions",
    "MemorizeReport",
    "Memory",
    "MultiSearchKeywords",
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
    "SearchKeywords",
    "SearchMode",
    "SearchOptions",
    "SearchResponse",
    "SearchResult",
    "Source",
    "StoreContext",
    "TimeSpan",
    "WriteResult",
    "__version__",
]
