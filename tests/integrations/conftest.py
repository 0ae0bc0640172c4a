"""Fixtures of the framework adapters' tests: a dataset of short invented notes on the test
database (hash embedder), through the sync API and through the async one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from memflow import AsyncDataset, AsyncMemory, Dataset, Memory
from memflow.embed.hash import HashEmbedder
from memflow.integrations.common import text_document

DATASET = "agent"
NOTES = [
    "Ada's birthday is on 14 July. She likes orchids and hates surprise parties.",
    "The orders database moves to PostgreSQL 16 on 12 March. Priya owns the migration.",
    "Tom reviews every schema change before it ships to production.",
    "The team offsite is in Porto in September; Noor books the hotel.",
    "Lena prefers window seats on long flights and drinks green tea.",
]
QUERIES = [
    "When is Ada's birthday?",
    "Who owns the database migration?",
    "Where is the team offsite?",
    "What does Lena drink?",
]


def memorize_notes(ds: Dataset, **tags: Any) -> None:
    for i, note in enumerate(NOTES):
        ds.memorize(text_document(note, source=f"note-{i}"), **tags)


@pytest.fixture
def ds(mem: Memory) -> Dataset:
    """The dataset, with the notes memorised."""
    out = mem.dataset(DATASET)
    memorize_notes(out)
    return out


@pytest_asyncio.fixture
async def amem(db_url: str) -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as m:
        yield m


@pytest.fixture
def ads(amem: AsyncMemory) -> AsyncDataset:
    """The same dataset through the async API (use it with ``ds`` to have the notes)."""
    return amem.dataset(DATASET)
