"""``memflow mcp`` end to end with the SDK's own client: over stdio and over streamable HTTP."""

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

from .conftest import NOTE, free_port, memflow_cmd, row_counts, server_process

TOOLS = {"memorize", "search", "forget", "reopen", "list_datasets", "stats", "get_episode"}


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    assert result.is_error
    return str(result.content[0].text)


def test_stdio_lists_memorizes_finds_and_reports_errors(module_db: str, tmp_path: Path) -> None:
    (tmp_path / "diary.md").write_text("# Garden\n\nThe tomatoes were planted on May 3.\n")
    cmd = memflow_cmd(module_db, "mcp", "--allow-read", str(tmp_path))
    params = StdioServerParameters(
        command=cmd[0], args=cmd[1:], env={"PYTHONPATH": os.pathsep.join(sys.path)}
    )

    async def session() -> None:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS | {"search_datasets"}  # not offered when locked
            search_schema = tools["search"].input_schema
            assert {"dataset", "query", "top_k", "display", "budget_tokens"} <= set(
                search_schema["properties"]
            )
            assert search_schema["properties"]["display"]["default"] == "highly_related"
            assert tools["search"].description and "context" in tools["search"].description

            wrote = payload(await client.call_tool("memorize", {"dataset": "notes", "text": NOTE}))
            doc = wrote["documents"][0]
            assert doc["status"] == "written"
            found = payload(
                await client.call_tool(
                    "search", {"dataset": "notes", "query": "When is the mobile release?"}
                )
            )
            assert "June 14" in found["context"] and found["display"] == "highly_related"

            by_path = payload(
                await client.call_tool("memorize", {"dataset": "notes", "path": "diary.md"})
            )
            assert by_path["documents"][0]["status"] == "written"
            outside = await client.call_tool(
                "memorize", {"dataset": "notes", "path": "/etc/hostname"}
            )
            assert "outside the directories this server may read" in error_text(outside)

            missing = await client.call_tool("search", {"dataset": "nowhere", "query": "x"})
            assert error_text(missing) == (
                "Error executing tool search: NotFound: no dataset named 'nowhere': "
                "list them with `memflow datasets`"
            )
            bad = await client.call_tool("forget", {"dataset": "notes", "episode_id": "nope"})
            assert "InvalidInput: 'nope' is not a" in error_text(bad)
            episode_id = doc["episode_ids"][0]
            tree = payload(
                await client.call_tool(
                    "get_episode", {"dataset": "notes", "episode_id": episode_id}
                )
            )
            assert [d["id"] for d in tree["documents"]] == [doc["id"]]
            read = await client.read_resource(f"memflow://notes/episodes/{episode_id}")
            assert json.loads(read.contents[0].text)["episode_id"] == episode_id

            names = payload(await client.call_tool("list_datasets", {}))["datasets"]
            assert [d["name"] for d in names] == ["notes"]
            assert payload(await client.call_tool("stats", {"dataset": "notes"}))["documents"] == 2

            # Scopes and metadata filters (issue 17): one user's note never answers the other.
            for user, text in (("u1", "Kai waters the ferns on Fridays."),
                               ("u2", "Kai sold the ferns to a neighbour.")):  # fmt: skip
                args = {"dataset": "notes", "text": text, "scope": {"user": user},
                        "metadata": {"owner": user}}  # fmt: skip
                assert (
                    payload(await client.call_tool("memorize", args))["documents"][0]["status"]
                    == "written"
                )
            query = {"dataset": "notes", "query": "What happened to Kai's ferns?",
                     "display": "summary"}  # fmt: skip
            mine = payload(await client.call_tool("search", {**query, "scope": {"user": "u2"}}))
            assert mine["results"] and {r["scope"]["user"] for r in mine["results"]} == {"u2"}
            where = {**query, "where": {"owner": {"in": ["u1"]}}}
            theirs = payload(await client.call_tool("search", where))
            assert theirs["results"] and {r["metadata"]["owner"] for r in theirs["results"]} == {
                "u1"
            }
            bad = await client.call_tool("search", {**query, "where": {"owner": {"like": "u"}}})
            assert "InvalidInput: unknown filter operator 'like' on 'owner'" in error_text(bad)

            # Undo a wrong closure (issue 26).
            for day, said in (("2023-01-10", "I live in Boston."),
                              ("2023-03-09", "We moved to Seattle last week!")):  # fmt: skip
                args = {"dataset": "moves", "text": f"Mia: {said}\nLeo: ok\nMia: yes",
                        "content_type": "dialog", "reference_time": day}  # fmt: skip
                wrote = payload(await client.call_tool("memorize", args))
                assert wrote["documents"][0]["status"] == "written", wrote
            found = payload(await client.call_tool("search", {"dataset": "moves",
                                                              "query": "Where does Mia live?"}))  # fmt: skip
            closed = next(u for u in found["context_units"] if u["invalid_at"] is not None)
            args = {"dataset": "moves", "point_id": closed["node_id"]}
            reopened = payload(await client.call_tool("reopen", args))["reopened"]
            assert reopened["invalid_at"] is None and reopened["changes"][-1]["action"] == "reopen"
            again = await client.call_tool("reopen", args)
            assert "InvalidInput:" in error_text(again) and "not closed" in error_text(again)

    anyio.run(session)


@pytest.fixture(scope="module")
def locked_url(module_db: str) -> Iterator[str]:
    port = free_port()
    cmd = memflow_cmd(module_db, "mcp", "--transport", "http", "--port", str(port), "-d", "mine")
    with server_process(cmd, port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_http_transport_with_a_locked_dataset(locked_url: str, module_db: str) -> None:
    async def session() -> None:
        async with Client(locked_url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert "dataset" not in tool.input_schema.get("properties", {})
            assert "path" not in tools["memorize"].input_schema["properties"]  # reads no files

            wrote = payload(await client.call_tool("memorize", {"text": NOTE}))
            assert wrote["documents"][0]["status"] == "written"
            found = payload(
                await client.call_tool(
                    "search", {"query": "Who owns the rollback plan?", "display": "summary"}
                )
            )
            assert "Dario owns the rollback plan" in found["context"]

            # A dataset argument cannot steer a call elsewhere: it is not part of the tool.
            before = row_counts(module_db)
            other = await client.call_tool("memorize", {"text": NOTE, "dataset": "theirs"})
            assert payload(other)["documents"][0]["status"] == "skipped"  # went to 'mine'
            assert row_counts(module_db) == before
            listed = payload(await client.call_tool("list_datasets", {}))["datasets"]
            assert [d["name"] for d in listed] == ["mine"]
            episode = wrote["documents"][0]["episode_ids"][0]
            with pytest.raises(Exception, match="serves only the dataset 'mine'"):
                await client.read_resource(f"memflow://notes/episodes/{episode}")

            too_many = await client.call_tool("search", {"query": "x", "top_k": 500})
            assert "top_k" in error_text(too_many)

    anyio.run(session)


def test_http_transport_refuses_oversized_and_malformed_requests(
    locked_url: str, module_db: str
) -> None:
    """Below the SDK: raw POSTs to /mcp get 4xx JSON answers and write nothing."""
    before = row_counts(module_db)
    head = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=60) as http:
        huge = (
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
            + (
                b"y" * (9 * 2**20)  # over the body cap (twice the 4 MiB document cap)
            )
            + b'"}}'
        )
        for body, statuses in (
            (huge, {413}),
            (b"{not json", {400}),
            (b'{"jsonrpc": "2.0", "id": 1}', {400}),
        ):
            resp = http.post(locked_url, content=body, headers=head)
            assert resp.status_code in statuses, (resp.status_code, resp.text[:200])
            assert resp.headers["content-type"].startswith("application/json"), resp.headers
            assert "error" in resp.json()
    assert row_counts(module_db) == before

    async def session() -> None:
        async with Client(locked_url) as client:
            cap = "x " * 2_200_000  # over the 4 MiB document cap, under the body cap
            too_big = await client.call_tool("memorize", {"text": cap})
            assert "PayloadTooLarge" in error_text(too_big)

    anyio.run(session)
    assert row_counts(module_db) == before
