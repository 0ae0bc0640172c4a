"""``memflow ui`` without API keys, a real process: every dataset for whoever reaches it on
loopback, nothing to sign in to, and only requests addressed to this server (the Host and Origin
check of ``memflow serve``, which stops DNS rebinding from web pages)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from memflow.embed.hash import HashEmbedder
from memflow.memory import Memory

from ..servers.conftest import free_port, memflow_cmd, server_process


@pytest.fixture(scope="module")
def base(module_db: str) -> Iterator[str]:
    with Memory.open(module_db, embedder=HashEmbedder(384)) as mem:
        mem.dataset("notes").memorize("Mira moved the mobile release to June 14.")
    port = free_port()
    cmd = memflow_cmd(module_db, "ui", "--port", str(port), "--allow-host", "memflow.internal")
    with server_process(cmd, port, {"MEMFLOW_API_KEYS": ""}):
        yield f"http://127.0.0.1:{port}"


def test_without_keys_every_dataset_shows_and_there_is_nothing_to_sign_in_to(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        page = client.get("/ui/")
        assert page.status_code == 200 and 'data-dataset="notes"' in page.text
        assert client.get("/ui/dataset?d=notes").status_code == 200
        assert client.get("/ui/login").headers["location"] == "/ui/"


def test_only_requests_for_this_server_are_answered(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        rebound = client.get("/ui/dataset?d=notes", headers={"Host": "attacker.example"})
        assert rebound.status_code == 421 and "June 14" not in rebound.text
        foreign = client.get("/ui/", headers={"Origin": "http://attacker.example"})
        assert foreign.status_code == 403 and "notes" not in foreign.text
        named = client.get("/ui/", headers={"Host": "memflow.internal:80"})  # --allow-host
        assert named.status_code == 200
        assert client.get("/ui/", headers={"Host": "localhost"}).status_code == 200
