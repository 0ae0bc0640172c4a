"""Search over several datasets through the doors, in process: ``POST /v1/search`` (a key
scoped to some datasets gets 403 for a list with another, and nothing of its own datasets) and
the MCP ``search_datasets`` tool (offered only when the server is not fixed to one dataset)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

from memflow import Memory
from memflow.embed.hash import HashEmbedder
from memflow.http_api import create_app
from memflow.mcp_server import build_server
from memflow.service import Service

KEY_A = "garden-key-0123456789abcdef"
ADMIN = "admin-key-0123456789abcdef"
QUERY = "Who replaced the oven thermostat?"


@pytest.fixture
def service(db_url: str) -> Iterator[Service]:
    with Memory.open(db_url, embedder=HashEmbedder(384)) as mem:
        mem.dataset("garden").add_episode(
            {"name": "Tomato planting", "summary": "Aiko planted tomatoes by the south fence."}
        )
        mem.dataset("kitchen").add_episode(
            {"name": "Oven repair", "summary": "Bruno replaced the oven thermostat."}
        )
        yield Service(mem)


def test_http_search_over_datasets_and_the_403_that_leaks_nothing(service: Service) -> None:
    app = create_app(service, keys={KEY_A: frozenset({"garden"}), ADMIN: None}, max_body=10_000)
    client = TestClient(app)
    body = {"query": QUERY, "datasets": ["garden", "kitchen"], "display": "summary"}
    ok = client.post("/v1/search", json=body, headers={"Authorization": f"Bearer {ADMIN}"})
    assert ok.status_code == 200, ok.text
    assert [(r["dataset"], r["name"]) for r in ok.json()["results"]] == [
        ("kitchen", "Oven repair"),
        ("garden", "Tomato planting"),
    ]

    for datasets in (["garden", "kitchen"], ["kitchen"], ["garden", "no-such-dataset"]):
        denied = client.post(
            "/v1/search",
            json={**body, "datasets": datasets},
            headers={"Authorization": f"Bearer {KEY_A}"},
        )
        assert denied.status_code == 403, denied.text
        assert set(denied.json()) == {"error"}  # no results, no context: nothing from garden
        assert "Tomato" not in denied.text and "Aiko" not in denied.text
        assert repr(datasets[-1]) in denied.json()["error"]["message"]
    own = client.post(
        "/v1/search",
        json={**body, "datasets": ["garden"]},
        headers={"Authorization": f"Bearer {KEY_A}"},
    )
    assert [r["dataset"] for r in own.json()["results"]] == ["garden"]
    bad = client.post(
        "/v1/search", json={**body, "datasets": []}, headers={"Authorization": f"Bearer {ADMIN}"}
    )
    assert bad.status_code == 422


def test_mcp_search_datasets_tool(service: Service) -> None:
    found: dict[str, Any] = {}

    async def session() -> None:
        async with Client(build_server(service)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search_datasets" in names
            result = await client.call_tool(
                "search_datasets",
                {"datasets": ["garden", "kitchen"], "query": QUERY, "display": "summary"},
            )
            assert not result.is_error, result.content
            found.update(result.structured_content or {})
            missing = await client.call_tool(
                "search_datasets", {"datasets": ["garden", "nowhere"], "query": QUERY}
            )
            assert missing.is_error and "NotFound" in str(missing.content[0].text)
        async with Client(build_server(service, dataset="garden")) as locked:
            assert "search_datasets" not in {t.name for t in (await locked.list_tools()).tools}

    anyio.run(session)
    assert [(r["dataset"], r["name"]) for r in found["results"]] == [
        ("kitchen", "Oven repair"),
        ("garden", "Tomato planting"),
    ]
