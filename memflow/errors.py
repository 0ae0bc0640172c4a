"""memflow's one error hierarchy.

Every error memflow raises is a :class:`MemflowError`. Driver and provider errors are wrapped with
the original kept as ``__cause__``. Each class carries a default message that says what to do next.
"""

from __future__ import annotations


class MemflowError(Exception):
    """Base class of every memflow error."""

    def __init__(self, message: str | None = None) -> None:
        text = message or (self.__doc__ or self.__class__.__name__).strip().splitlines()[0]
        super().__init__(text)


class ConfigurationError(MemflowError):
    """memflow is misconfigured: check the arguments and MEMFLOW_* environment variables."""


class DatabaseError(MemflowError):
    """The database failed; check that the server is running and MEMFLOW_DATABASE_URL is right."""


class ConnectionFailed(DatabaseError):
    """Could not reach PostgreSQL; check the URL, that the server runs, and retry."""


class ExtensionMissing(DatabaseError):
    """The server lacks pgvector >= 0.8: install it (e.g. the pgvector/pgvector image or the
    postgresql-NN-pgvector package) and run `CREATE EXTENSION vector`."""


class SchemaOutOfDate(DatabaseError):
    """The memflow schema is behind this version: run `memflow db upgrade` (or `alembic upgrade head`)."""


class EmbeddingDimensionMismatch(ConfigurationError):
    """The embedder's dimension differs from the store's: open with the embedder the store was
    initialised with, or use a new database."""


class EmbedderMismatch(ConfigurationError):
    """The dataset was embedded with another model: open the store with that embedder
    (--embedder / MEMFLOW_EMBEDDER), or use another dataset."""


class EmbeddingError(MemflowError):
    """The embedding provider failed or returned invalid vectors; check the provider settings."""


class ExtractionError(MemflowError):
    """Extraction failed and nothing was written; check the LLM endpoint or use extractor='rules'."""


class NotFound(MemflowError):
    """The requested dataset, document or episode does not exist: list what exists with
    `memflow datasets` or `memflow stats`."""


class InvalidInput(MemflowError):
    """The input is not valid: fix it as the message says and retry."""


__all__ = [
    "ConfigurationError",
    "ConnectionFailed",
    "DatabaseError",
    "EmbedderMismatch",
    "EmbeddingDimensionMismatch",
    "EmbeddingError",
    "ExtensionMissing",
    "ExtractionError",
    "InvalidInput",
    "MemflowError",
    "NotFound",
    "SchemaOutOfDate",
]
