"""The llm extractor's procedures and entity labels, against the scripted OpenAI server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memflow.llm.client import LlmClient, LlmSettings
from memflow.llm.extractor import LlmExtractor
from memflow.store.plan import plan_drafts
from tests.integration.test_llm_extractor import dialog_doc
from tests.support.fake_openai import ChatJson, FakeOpenAI

TURNS = [
    ("D1:1", "Ines", "How do we restart the ingest worker when it hangs?"),
    ("D1:2", "Oskar", "Stop the queue consumer, restart the worker pod, then start the consumer."),
    ("D1:3", "Ines", "Norbright is our supplier for the disks, by the way."),
]


def reply() -> dict[str, Any]:
    return {
        "events": [
            {
                "name": "Restarting the ingest worker",
                "sources": ["D1:1", "D1:2", "D1:3"],
                "sections": [
                    {
                        "title": "Ingest worker restart",
                        "content": "Oskar explains how to restart the ingest worker.",
                        "facet_type": "fact",
                        "sources": ["D1:1", "D1:2"],
                        "points": [],
                        "entities": [],
                    }
                ],
                "entities": [
                    {
                        "name": "Norbright",
                        "entity_type": "organisation",
                        "description": "The disk supplier.",
                        "role": "supplier",
                        "aliases": [],
                        "labels": ["Supplier"],
                    }
                ],
                "procedures": [
                    {
                        "name": "Restart the ingest worker",
                        "summary": "What to do when the ingest worker hangs.",
                        "context": [{"aspect": "WHEN", "text": "The ingest worker hangs."}],
                        "steps": [
                            {"text": "Stop the queue consumer.", "sources": ["D1:2"]},
                            {"text": "Restart the worker pod.", "sources": ["D1:2", "X9"]},
                            {"text": "Start the consumer again.", "sources": ["D1:2"]},
                        ],
                    },
                    {"name": "Empty", "summary": "", "context": [], "steps": []},
                ],
            }
        ]
    }


@pytest.fixture
def client() -> Iterator[tuple[FakeOpenAI, LlmClient]]:
    with FakeOpenAI() as fake:
        settings = LlmSettings(base_url=fake.base_url, model="m", api_key="k", timeout_s=5)
        with LlmClient(settings) as c:
            yield fake, c


def test_procedures_and_labels_become_drafts(client: tuple[FakeOpenAI, LlmClient]) -> None:
    fake, llm = client
    fake.script_chat(ChatJson(reply()))
    [draft], _ = LlmExtractor(llm).extract(dialog_doc(TURNS))
    [proc] = draft.procedures  # the one without steps is dropped
    assert proc.name == "Restart the ingest worker"
    assert [s.text for s in proc.steps] == [
        "Stop the queue consumer.",
        "Restart the worker pod.",
        "Start the consumer again.",
    ]
    assert proc.steps[1].sources == ["D1:2"]  # unknown keys dropped
    assert [(c.aspect, c.text) for c in proc.context] == [("when", "The ingest worker hangs.")]
    assert draft.entities[0].types == ["supplier"]
    # The schema the model is asked to follow names both.
    schema = json.dumps(fake.chat_requests[0].body["response_format"])
    assert '"procedures"' in schema and '"labels"' in schema
    plan = plan_drafts(uuid.UUID(int=1), [draft])
    kinds = sorted(n.kind for n in plan.nodes.values())
    assert kinds.count("ProcedureStepPoint") == 3 and "EntityType" in kinds
