"""``memflow serve`` end to end: a real server process on 127.0.0.1, httpx as the client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .conftest import NOTE, free_port, memflow_cmd, row_counts, server_process

KEY_A = "alpha-key-0123456789abcdef"
ADMIN = "admin-key-0123456789abcdef"
DOC_CAP = 20_000


@pytest.fixture(scope="module")
def api(module_db: str) -> Iterator[httpx.Client]:
    port = free_port()
    env = {
        "MEMFLOW_API_KEYS": json.dumps({KEY_A: ["alpha"], ADMIN: ["*"]}),
        "MEMFLOW_MAX_DOCUMENT_BYTES": str(DOC_CAP),
    }
    cmd = memflow_cmd(module_db, "serve", "--port", str(port))
    with (
        server_process(cmd, port, env),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        yield client


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def error_of(resp: httpx.Response, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}
    return dict(body["error"])


def test_health_and_openapi(api: httpx.Client) -> None:
    health = api.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    spec = api.get("/openapi.json").json()
    assert {
        "/v1/datasets",
        "/v1/datasets/{name}/memorize",
        "/v1/datasets/{name}/search",
        "/v1/datasets/{name}/documents/{document_id}",
        "/v1/datasets/{name}/episodes/{episode_id}",
    } <= set(spec["paths"])
    search = spec["paths"]["/v1/datasets/{name}/search"]["post"]
    assert "requestBody" in search and "422" in search["responses"]


def test_memorize_search_delete_round_trip(api: httpx.Client, module_db: str) -> None:
    h = auth(KEY_A)
    first = api.post("/v1/datasets/alpha/memorize", json={"text": NOTE}, headers=h)
    assert first.status_code == 200, first.text
    doc = first.json()["documents"][0]
    assert doc["status"] == "written" and doc["episodes"] >= 1
    again = api.post("/v1/datasets/alpha/memorize", json={"text": NOTE}, headers=h).json()
    assert again["documents"][0]["status"] == "skipped" and again["documents"][0]["id"] == doc["id"]

    query = {"query": "Who owns the rollback plan?", "display": "summary", "top_k": 3}
    found = api.post("/v1/datasets/alpha/search", json=query, headers=h)
    assert found.status_code == 200, found.text
    body = found.json()
    assert "Dario owns the rollback plan" in body["context"]
    app, cpu = (float(p.split("dur=")[1]) for p in found.headers["server-timing"].split(","))
    assert cpu > 0 and 0 < app < found.elapsed.total_seconds() * 1000  # the server's own share
    # The same JSON as the CLI's `memflow search --json` on the same store.
    cli = subprocess.run(
        memflow_cmd(module_db, "search", query["query"], "-d", "alpha", "--display", "summary",
                    "--top-k", "3", "--json"),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    cli_body = json.loads(cli.stdout)
    assert set(cli_body) == set(body)
    assert [r["episode_id"] for r in cli_body["results"]] == [
        r["episode_id"] for r in body["results"]
    ]
    assert cli_body["context"] == body["context"]

    # The agent default is the highly_related context, in Chinese too.
    zh = api.post("/v1/datasets/alpha/search", json={"query": "谁负责支付回调迁移？"}, headers=h)
    assert zh.json()["display"] == "highly_related" and "李雷" in zh.json()["context"]

    episode_id = doc["episode_ids"][0]
    shown = api.get(f"/v1/datasets/alpha/episodes/{episode_id}", headers=h).json()
    assert shown["rows"][0]["kind"] == "Episode"
    assert [d["id"] for d in shown["documents"]] == [doc["id"]]

    gone = api.delete(f"/v1/datasets/alpha/documents/{doc['id']}", headers=h)
    assert gone.status_code == 200 and gone.json()["documents"] == 1
    after = api.post("/v1/datasets/alpha/search", json=query, headers=h).json()
    assert after["results"] == []
    assert api.get("/v1/datasets/alpha/stats", headers=h).json()["documents"] == 0
    error_of(api.delete(f"/v1/datasets/alpha/documents/{doc['id']}", headers=h), 404)


def test_keys_bind_requests_to_their_datasets(api: httpx.Client, module_db: str) -> None:
    before = row_counts(module_db)
    assert error_of(api.get("/v1/datasets"), 401)["type"] == "Unauthorized"
    error_of(api.get("/v1/datasets", headers=auth("not-a-key-but-long-enough")), 401)
    error_of(api.get("/v1/datasets", headers={"Authorization": KEY_A}), 401)
    denied = api.post("/v1/datasets/beta/memorize", json={"text": NOTE}, headers=auth(KEY_A))
    assert "'beta'" in error_of(denied, 403)["message"]
    error_of(api.post("/v1/datasets/beta/search", json={"query": "x"}, headers=auth(KEY_A)), 403)
    assert row_counts(module_db) == before  # nothing written, not even the dataset

    ok = api.post("/v1/datasets/beta/memorize", json={"text": NOTE}, headers=auth(ADMIN))
    assert ok.status_code == 200
    # Every route under another dataset: 403, whatever the rest of the request says.
    doc = ok.json()["documents"][0]
    before = row_counts(module_db)
    beta = "/v1/datasets/beta"
    error_of(api.get(f"{beta}/stats", headers=auth(KEY_A)), 403)
    error_of(api.get(f"{beta}/episodes/{doc['episode_ids'][0]}", headers=auth(KEY_A)), 403)
    error_of(api.delete(f"{beta}/documents/{doc['id']}", headers=auth(KEY_A)), 403)
    error_of(api.delete(f"{beta}/episodes/{doc['episode_ids'][0]}", headers=auth(KEY_A)), 403)
    assert row_counts(module_db) == before
    names_a = {d["name"] for d in api.get("/v1/datasets", headers=auth(KEY_A)).json()["datasets"]}
    names_all = {d["name"] for d in api.get("/v1/datasets", headers=auth(ADMIN)).json()["datasets"]}
    assert "beta" in names_all and "beta" not in names_a


def test_bad_requests_get_json_errors_and_change_nothing(api: httpx.Client, module_db: str) -> None:
    h = auth(ADMIN)
    api.post("/v1/datasets/gamma/memorize", json={"text": NOTE}, headers=h)
    before = row_counts(module_db)
    url = "/v1/datasets/gamma"
    big = "many words here. " * (DOC_CAP // 10)  # over the document cap, under the body cap
    assert error_of(api.post(f"{url}/memorize", json={"text": big}, headers=h), 413)["type"] == (
        "PayloadTooLarge"
    )
    huge = "x" * (4 * DOC_CAP + 200_000)  # over the body cap: refused before it is parsed
    error_of(api.post(f"{url}/memorize", json={"text": huge}, headers=h), 413)
    error_of(api.post(f"{url}/memorize", content=b"{not json", headers=h), 422)
    error_of(api.post(f"{url}/memorize", json={"txt": NOTE}, headers=h), 422)
    error_of(api.post(f"{url}/memorize", json={"text": NOTE, "extra": 1}, headers=h), 422)
    error_of(api.post(f"{url}/memorize", json={"text": "\x00\x01\x02 binary"}, headers=h), 400)
    bad_time = {"text": "A new note about the garden.", "reference_time": "soon"}
    assert (
        "ISO 8601"
        in error_of(api.post(f"{url}/memorize", json=bad_time, headers=h), 400)["message"]
    )
    error_of(api.post(f"{url}/search", json={"query": "x", "top_k": 1000}, headers=h), 422)
    error_of(api.post(f"{url}/search", json={"query": "x", "budget_tokens": 0}, headers=h), 422)
    error_of(api.post(f"{url}/search", json={"query": "x", "mode": "magic"}, headers=h), 422)
    error_of(api.post(f"{url}/search", json={"query": ""}, headers=h), 422)
    missing = api.post("/v1/datasets/nowhere/search", json={"query": "x"}, headers=h)
    assert error_of(missing, 404)["type"] == "NotFound"
    error_of(api.post(f"{url}/search", content=b'["query"]', headers=h), 422)
    error_of(api.post(f"{url}/search", content=b'{"query": "x"', headers=h), 422)
    error_of(api.delete(f"{url}/documents/not-an-id", headers=h), 400)
    error_of(api.delete(f"{url}/episodes/{'0' * 32}", headers=h), 404)
    error_of(api.get(f"{url}/episodes/not-an-id", headers=h), 400)
    error_of(api.get(f"{url}/episodes/{'0' * 32}", headers=h), 404)
    error_of(api.get("/v2/anything", headers=h), 404)
    assert row_counts(module_db) == before


def test_scopes_and_filters_over_http(api: httpx.Client) -> None:
    h = auth(ADMIN)
    for user, text in (
        ("ana", "Ana keeps the spare office keys in the blue drawer."),
        ("ben", "Ben lost the spare office keys at the station."),
    ):
        body = {"text": text, "scope": {"user": user}, "metadata": {"floor": 3}}
        wrote = api.post("/v1/datasets/scoped/memorize", json=body, headers=h)
        assert wrote.status_code == 200, wrote.text
    query = {"query": "Where are the spare office keys?", "display": "summary"}
    for user in ("ana", "ben"):
        found = api.post(
            "/v1/datasets/scoped/search",
            json={**query, "scope": {"user": user}, "where": {"floor": {"gte": 3}}},
            headers=h,
        ).json()
        assert found["results"] and {r["scope"]["user"] for r in found["results"]} == {user}
        assert all(r["metadata"] == {"floor": 3} for r in found["results"])
    none = api.post(
        "/v1/datasets/scoped/search", json={**query, "where": {"floor": {"lt": 3}}}, headers=h
    ).json()
    assert none["results"] == []
    err = error_of(
        api.post(
            "/v1/datasets/scoped/search",
            json={**query, "scope": {"team": "x"}},
            headers=h,
        ),
        400,
    )
    assert err["type"] == "InvalidInput" and "'team'" in err["message"]


def _chat(day: str, text: str) -> str:
    session = {"started_at": day, "messages": [{"speaker": "Mia", "text": text}]}
    return json.dumps({"sessions": [session]})


def test_reopen_undoes_a_closure(api: httpx.Client) -> None:
    h = auth(ADMIN)
    for day, said in (("2023-01-10T10:00:00+00:00", "I live in Boston."),
                      ("2023-03-09T10:00:00+00:00", "We moved to Seattle last week!")):  # fmt: skip
        body = {"text": _chat(day, said), "content_type": "conversation"}
        assert api.post("/v1/datasets/moves/memorize", json=body, headers=h).status_code == 200
    query = {"query": "Where does Mia live?", "display": "highly_related"}
    found = api.post("/v1/datasets/moves/search", json=query, headers=h).json()
    closed = next(u for u in found["context_units"] if u["invalid_at"] is not None)
    url = f"/v1/datasets/moves/points/{closed['node_id']}/reopen"
    done = api.post(url, headers=h)
    assert done.status_code == 200, done.text
    entry = done.json()["reopened"]
    assert entry["invalid_at"] is None and entry["changes"][-1]["action"] == "reopen"
    again = error_of(api.post(url, headers=h), 400)
    assert again["type"] == "InvalidInput" and "not closed" in again["message"]
    after = api.post("/v1/datasets/moves/search", json=query, headers=h).json()
    assert "superseded" not in after["context"]
