"""Issue 25 at the two server doors, with real server processes: MCP ``memorize`` takes a
conversation (and its ``text`` stays a string), keyless ``memflow serve`` answers only requests
addressed to it (DNS rebinding), and a database failure's message shows no server internals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import psycopg
import pytest
from mcp import Client

from memflow.config import libpq_url

from ..conftest import TEMPLATE, _scratch_database
from .conftest import free_port, memflow_cmd, row_counts, server_process

CONVERSATION = {
    "sessions": [
        {
            "started_at": "2024-05-08T13:56:00Z",
            "messages": [
                {"speaker": "Ana", "text": "Kai watered the ferns on Friday."},
                {"speaker": "Bo", "text": "And he repotted the big one on Saturday."},
            ],
        }
    ]
}


def _result(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(result.structured_content)


@pytest.fixture(scope="module")
def mcp_url(module_db: str) -> Iterator[str]:
    port = free_port()
    with server_process(
        memflow_cmd(module_db, "mcp", "--transport", "http", "--port", str(port)), port
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def test_mcp_memorize_takes_a_conversation_and_text_stays_a_string(
    mcp_url: str, module_db: str
) -> None:
    async def session() -> None:
        async with Client(mcp_url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            props = tools["memorize"].input_schema["properties"]
            assert props["text"]["type"] == "string"  # exactly a string: never parsed as JSON
            assert "conversation" in props

            # A conversation sent as JSON text: memorised as that conversation.
            text = json.dumps(CONVERSATION)
            wrote = _result(await client.call_tool("memorize", {"dataset": "c", "text": text}))
            doc = wrote["documents"][0]
            assert doc["status"] == "written" and doc["content_type"] == "conversation", doc

            # The same conversation as an object: the same document (skipped, same content).
            again = _result(
                await client.call_tool("memorize", {"dataset": "c", "conversation": CONVERSATION})
            )
            assert again["documents"][0]["content_type"] == "conversation"

            other = {"messages": [{"speaker": "Lu", "text": "The fern shop opens at nine."},
                                  {"speaker": "Kai", "text": "I will be there at ten."}]}  # fmt: skip
            wrote = _result(
                await client.call_tool("memorize", {"dataset": "c", "conversation": other})
            )
            assert wrote["documents"][0]["status"] == "written"
            found = _result(
                await client.call_tool(
                    "search", {"dataset": "c", "query": "When does the fern shop open?"}
                )
            )
            assert "nine" in found["context"], found["context"]

            # JSON-looking text that is no conversation reaches memflow as a string and is
            # refused by memflow with a reason (not by the SDK as "not a valid string").
            before = row_counts(module_db)
            odd = await client.call_tool("memorize", {"dataset": "c", "text": '{"a": [1, 2]}'})
            assert odd.is_error and "InvalidInput" in odd.content[0].text, odd.content
            both = await client.call_tool(
                "memorize", {"dataset": "c", "text": "x", "conversation": CONVERSATION}
            )
            assert both.is_error and "exactly one of" in both.content[0].text
            bad = await client.call_tool(
                "memorize", {"dataset": "c", "conversation": {"sessions": "none"}}
            )
            assert bad.is_error and "InvalidInput" in bad.content[0].text, bad.content
            assert row_counts(module_db) == before

    anyio.run(session)


@pytest.fixture(scope="module")
def keyless(module_db: str) -> Iterator[tuple[httpx.Client, int]]:
    port = free_port()
    cmd = memflow_cmd(module_db, "serve", "--port", str(port), "--allow-host", "memflow.internal")
    with (
        server_process(cmd, port, {"MEMFLOW_API_KEYS": ""}),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        yield client, port


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example.com"}, 421),
        ({"Host": "evil.example.com:8080"}, 421),
        ({"Host": "127.0.0.1.evil.example.com"}, 421),
        ({"Host": ""}, 421),
        ({"Origin": "http://evil.example.com"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "file://"}, 403),
        ({"Host": "localhost", "Origin": "http://localhost:3000"}, 200),
        ({"Host": "[::1]:8080"}, 200),
        ({"Host": "LOCALHOST."}, 200),
        ({"Host": "memflow.internal:8080", "Origin": "https://memflow.internal"}, 200),
        ({}, 200),
    ],
)
def test_keyless_serve_answers_only_requests_addressed_to_it(
    keyless: tuple[httpx.Client, int], headers: dict[str, str], status: int
) -> None:
    client, _ = keyless
    for path in ("/v1/datasets", "/healthz"):
        resp = client.get(path, headers=headers)
        assert resp.status_code == status, (path, resp.text)
        if status != 200:
            error = resp.json()["error"]
            assert error["type"] == "Forbidden" and "--allow-host" in error["message"]


def test_a_database_failure_shows_no_server_internals(pg_admin_url: str, template_db: str) -> None:
    """The store's database disappears under running servers: both answer 503 / a tool error
    that says what to do, without the socket path or host the server connects to."""
    with _scratch_database(pg_admin_url, TEMPLATE) as url:
        http_port, mcp_port = free_port(), free_port()
        serve = memflow_cmd(url, "serve", "--port", str(http_port))
        mcp = memflow_cmd(url, "mcp", "--transport", "http", "--port", str(mcp_port))
        with server_process(serve, http_port) as serve_log, server_process(mcp, mcp_port):
            with httpx.Client(base_url=f"http://127.0.0.1:{http_port}", timeout=60) as client:
                assert client.get("/v1/datasets").status_code == 200
                database = url.rsplit("/", 1)[1].split("?")[0]
                with psycopg.connect(libpq_url(pg_admin_url), autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE {database} WITH (FORCE)")
                resp = client.get("/v1/datasets")
                assert resp.status_code == 503, resp.text
                message = resp.json()["error"]["message"]

            async def session() -> str:
                async with Client(f"http://127.0.0.1:{mcp_port}/mcp") as c:
                    res = await c.call_tool("list_datasets", {})
                    assert res.is_error
                    return str(res.content[0].text)

            tool_message = anyio.run(session)
            logged = serve_log.read_text(errors="replace")
        secrets = {"socket", "/tmp", ".s.PGSQL", database, "host="}
        for text in (message, tool_message):
            assert "retry" in text and not any(s in text for s in secrets), text
        assert database in logged  # the operator's log keeps the detail
