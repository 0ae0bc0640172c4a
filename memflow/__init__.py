"""memflow: episodic memory for AI agents, entirely in PostgreSQL + pgvector.

>>> import memflow
>>> with memflow.Memory.open() as mem:            # embedded PostgreSQL unless MEMFLOW_DATABASE_URL
...     ds = mem.dataset("notes")
...     ds.memorize("meeting.md")
...     hits = ds.search("what did we decide about the database?")
"""

from memflow.drafts import EntityDraft, EpisodeDraft, FacetDraft, PointDraft, TimeSpan
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
from memflow.memory import Dataset, DatasetInfo, Memory

__version__ = "0.1.0"

__all__ = [
    "ConfigurationError",
    "ConnectionFailed",
    "DatabaseError",
    "Dataset",
    "DatasetInfo",
    "EmbedderMismatch",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "EntityDraft",
    "EpisodeDraft",
    "ExtensionMissing",
    "ExtractionError",
    "FacetDraft",
    "InvalidInput",
    "MemflowError",
    "Memory",
    "NotFound",
    "PointDraft",
    "SchemaOutOfDate",
    "TimeSpan",
    "__version__",
]
