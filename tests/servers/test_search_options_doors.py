"""Every search option through both doors, real server processes: the HTTP body and the MCP tool
schema are derived from ``SearchOptions`` (memflow.service.search_request), so each door takes
each option; ``as_of``, ``known_at`` and ``where`` change what comes back as they do in the
library."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from memflow import Memory, SearchOptions
from memflow.embed.hash import HashEmbedder

from .conftest import free_port, memflow_cmd, server_process

QUERY = "how often is the pager handed over?"
# Every option set to a value the search accepts (as a remote caller sends it: JSON).
EVERY = {
    "mode": "episodic",
    "display": "highly_related",
    "top_k": 3,
    "budget_tokens": 300,
    "token_counter": "words",
    "timezone": "+02:00",
    "now": "2024-07-01T12:00:00Z",
    "as_of": "2024-07-01",
    "known_at": "2024-07-01",
    "include_history": True,
    "scope": {"user": "uma"},
    "where": {"team": "ops"},
    "config": {"relevance_cutoff": 0.3},
}
# Every option again, over both datasets: only the blue team's note passes (the teams' notes have
# no scope and were written after as_of / known_at).
BLUE_TEAMS = {**EVERY, "datasets": ["ops", "teams"], "where": {"team": "blue"}, "scope": None,
              "as_of": None, "known_at": None}  # fmt: skip
OPTIONS = set(SearchOptions.model_fields)
assert set(EVERY) == OPTIONS - {"datasets"}


@pytest.fixture(scope="module")
def store(module_db: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``ops``: a note edited once (the pager every 7, then every 14 days); ``teams``: two
    notes of two teams (metadata)."""
    note = tmp_path_factory.mktemp("notes") / "oncall.md"
    with Memory.open(module_db, embedder=HashEmbedder(384)) as mem:
        ops = mem.dataset("ops")
        for days, when in ((7, "2024-03-01"), (14, "2024-06-01")):
            note.write_text(f"# On-call\n\nThe pager rotation is handed over every {days} days.\n")
            ops.memorize(
                note, reference_time=_time(when), scope={"user": "uma"}, metadata={"team": "ops"}
            )
        teams = mem.dataset("teams")
        for team, text in (("red", "The red team hands the pager over on Mondays."),
                           ("blue", "The blue team hands the pager over on Fridays.")):  # fmt: skip
            teams.memorize(text, metadata={"team": team})
    return module_db


def _time(day: str) -> Any:
    from datetime import UTC, datetime

    return datetime.fromisoformat(day).replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def api(store: str) -> Iterator[httpx.Client]:
    port = free_port()
    with (
        server_process(memflow_cmd(store, "serve", "--port", str(port)), port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        yield client


def _ok(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def test_http_takes_every_option_and_as_of_and_where_work(api: httpx.Client) -> None:
    spec = api.get("/openapi.json").json()["components"]["schemas"]
    assert set(spec["SearchBody"]["properties"]) == OPTIONS - {"datasets"} | {"query"}
    assert set(spec["SearchDatasetsBody"]["properties"]) == OPTIONS | {"query"}
    assert spec["SearchBody"]["properties"]["top_k"]["maximum"] == 100

    url = "/v1/datasets/ops/search"
    now = _ok(api.post(url, json={"query": QUERY}))
    assert now["context"].index("14 days") < now["context"].index("7 days")
    then = _ok(api.post(url, json={"query": QUERY, "as_of": "2024-04-01"}))
    assert "7 days" in then["context"] and "14 days" not in then["context"]
    # known_at: the store's own clock (when rows were written): nothing was known in 2020.
    assert not _ok(api.post(url, json={"query": QUERY, "known_at": "2020-01-01"}))["results"]
    blue = _ok(
        api.post("/v1/datasets/teams/search", json={"query": QUERY, "where": {"team": "blue"}})
    )
    assert blue["results"] and "Fridays" in blue["context"] and "Mondays" not in blue["context"]

    every = _ok(api.post(url, json={"query": QUERY, **EVERY}))
    assert every["display"] == "highly_related" and len(every["results"]) <= 3
    both = _ok(api.post("/v1/search", json={"query": QUERY, **BLUE_TEAMS}))
    assert {r["dataset"] for r in both["results"]} == {"teams"}
    bad = api.post(url, json={"query": QUERY, "as_of": "someday"})
    assert bad.status_code == 422 and "ISO 8601" in bad.json()["error"]["message"]
    unknown = api.post(url, json={"query": QUERY, "config": {"no_such_knob": 1}})
    assert unknown.status_code == 422
    # A remote caller's config is bounded: millions of rows per collection tie up the server.
    huge = api.post(url, json={"query": QUERY, "config": {"wide_search_top_k": 10**7}})
    assert huge.status_code == 422 and "wide_search_top_k" in huge.text


def test_mcp_takes_every_option_and_as_of_and_where_work(store: str) -> None:
    cmd = memflow_cmd(store, "mcp")
    params = StdioServerParameters(
        command=cmd[0], args=cmd[1:], env={"PYTHONPATH": os.pathsep.join(sys.path)}
    )

    def context(result: Any) -> str:
        assert not result.is_error, result.content
        return str(result.structured_content["context"])

    async def session() -> None:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["search"].input_schema["properties"]
            assert set(schema) == OPTIONS - {"datasets"} | {"query", "dataset"}
            several = tools["search_datasets"].input_schema
            assert set(several["properties"]) == OPTIONS | {"query"}
            assert set(several["required"]) == {"datasets", "query"}

            ops = {"dataset": "ops", "query": QUERY}
            now = context(await client.call_tool("search", ops))
            assert now.index("14 days") < now.index("7 days")
            then = context(await client.call_tool("search", {**ops, "as_of": "2024-04-01"}))
            assert "7 days" in then and "14 days" not in then
            unknown = await client.call_tool("search", {**ops, "known_at": "2020-01-01"})
            assert not unknown.is_error and not unknown.structured_content["results"]
            blue = {"dataset": "teams", "query": QUERY, "where": {"team": "blue"}}
            found = context(await client.call_tool("search", blue))
            assert "Fridays" in found and "Mondays" not in found

            every = await client.call_tool("search", {**ops, **EVERY})
            assert not every.is_error, every.content
            assert len(every.structured_content["results"]) <= 3
            both = await client.call_tool("search_datasets", {"query": QUERY, **BLUE_TEAMS})
            assert {r["dataset"] for r in both.structured_content["results"]} == {"teams"}
            bad = await client.call_tool("search", {**ops, "as_of": "someday"})
            assert bad.is_error and "ISO 8601" in bad.content[0].text

    anyio.run(session)


def test_the_remote_request_is_the_options_with_bounds(tmp_path: Path) -> None:
    from memflow.service import Limits, search_request

    one, several = search_request(several=False), search_request(several=True)
    assert set(one.model_fields) == OPTIONS - {"datasets"} | {"query"}
    assert set(several.model_fields) == OPTIONS | {"query"}
    assert one.model_validate({"query": "x"}).display == "highly_related"  # type: ignore[attr-defined]
    tight = search_request(several=True, limits=Limits(max_top_k=5, max_datasets=2))
    schema = json.dumps(tight.model_json_schema())
    assert '"maximum": 5' in schema and '"maxItems": 2' in schema
