"""Start-up rules of the doors that need no database: missing extra, keys, bind address."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from memflow.errors import ConfigurationError, DatabaseError, InvalidInput, NotFound
from memflow.http_api import parse_api_keys, status_of
from memflow.service import PayloadTooLarge, parse_time


def _cli(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(("command", "module"), [("serve", "fastapi"), ("mcp", "mcp")])
def test_missing_server_extra_says_what_to_install(command: str, module: str) -> None:
    res = _cli(
        f"import sys; sys.modules[{module!r}] = None; from memflow.cli import main; "
        f"sys.exit(main([{command!r}, '--database-url', 'postgresql://nowhere/x']))"
    )
    assert res.returncode == 1
    assert f"memflow {command} needs {module}" in res.stderr
    assert "pip install 'memflow[server]'" in res.stderr


def test_serve_without_keys_refuses_a_public_address() -> None:
    code = "import sys; from memflow.cli import main; sys.exit(main(sys.argv[1:]))"
    res = subprocess.run(
        [sys.executable, "-c", code, "serve", "--host", "0.0.0.0", "--database-url", "postgresql://nowhere/x"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "MEMFLOW_API_KEYS": ""},
    )  # fmt: skip
    assert res.returncode == 1
    assert "no API keys configured, so memflow serve binds only 127.0.0.1" in res.stderr
    res = subprocess.run(
        [sys.executable, "-c", code, "mcp", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 1 and "listens only on 127.0.0.1" in res.stderr


def test_api_keys_parse_and_reject_bad_tables() -> None:
    table = parse_api_keys(json.dumps({"k" * 16: ["a", "b"], "z" * 20: ["*"]}))
    assert table == {"k" * 16: frozenset({"a", "b"}), "z" * 20: None}
    assert parse_api_keys(None) == {} and parse_api_keys("  ") == {}
    for raw in ("{not json", '["a"]', json.dumps({"short": ["*"]}), json.dumps({"k" * 16: "a"})):
        with pytest.raises(ConfigurationError, match="MEMFLOW_API_KEYS"):
            parse_api_keys(raw)


def test_error_statuses_and_times() -> None:
    assert status_of(PayloadTooLarge("x")) == 413
    assert status_of(InvalidInput("x")) == 400
    assert status_of(NotFound("x")) == 404
    assert status_of(DatabaseError("the statement was cancelled [57014]")) == 504
    assert status_of(DatabaseError("down")) == 503
    assert parse_time("2024-05-08", "t").isoformat() == "2024-05-08T00:00:00+00:00"  # type: ignore[union-attr]
    assert parse_time("2024-05-08T13:56:00Z", "t").utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="not an ISO 8601 time"):
        parse_time("soon", "reference_time")


def test_statement_timeout_cancels_and_maps_to_504(mem: Any) -> None:
    from sqlalchemy import text

    from memflow.db import engine as dbe
    from memflow.service import Service, limit_statements

    service = Service(mem)
    service.memory.dataset("t")
    limit_statements(mem.engine, 0.2)
    with (
        pytest.raises(DatabaseError, match="cancelled") as caught,
        dbe.transaction(mem.engine) as conn,
    ):
        conn.execute(text("SELECT pg_sleep(2)"))
    assert status_of(caught.value) == 504
    assert service.stats("t")["documents"] == 0  # the pool still serves ordinary calls
    with pytest.raises(InvalidInput, match="positive"):
        limit_statements(mem.engine, 0)


def test_the_service_parses_each_input_once(mem: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote memorize checks its input before anything is written, and the memorize that
    follows takes the documents so resolved (inputs up to MEMFLOW_MAX_DOCUMENT_BYTES)."""
    from memflow.service import Service, resolve_inputs

    resolver = sys.modules[resolve_inputs.__module__]
    parsed: list[str] = []
    real = resolver.parse_input

    def counting(text: str, **kwargs: Any) -> Any:
        parsed.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(resolver, "parse_input", counting)
    report = Service(mem).memorize("notes", text="Ana keeps the spare keys in the blue drawer.")
    assert report["documents"][0]["status"] == "written" and len(parsed) == 1
