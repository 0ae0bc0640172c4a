"""What the layers below the facade need of one dataset: the store's engine and embedder, the
dataset id every query is scoped to, and the fault-injection hook of the write path.

``memflow.memory.Dataset.context`` builds one per call; ``ingest``, ``recall`` and ``store``
receive it instead of the ``Dataset`` facade, so they never import the facade.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from memflow.embed.base import Embedder

# Fault-injection points (tests/reliability): a callable receiving the stage name may raise.
FaultHook = Callable[[str], None]


@dataclass(frozen=True)
class StoreContext:
    engine: Engine
    embedder: Embedder
    dataset_id: uuid.UUID
    fault: FaultHook | None = None


__all__ = ["FaultHook", "StoreContext"]
