"""The pages of docs/integrations/ run as written (their Python blocks, in order, against the
test database with the hash embedder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ..conftest import REPO

PAGES = {
    "langchain.md": [
        "Remembered: I moved to Lyon in March.",
        "langchain False",
        "Remembered: My train",
    ],
    "langgraph.md": ["diet Lena is vegetarian.", "Lena eats fish again.", "trip", "lab door"],
    "llama_index.md": ["The boiler service is on 2 June.", "t0"],
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_runs(db_url: str, page: str) -> None:
    text = (REPO / "docs" / "integrations" / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    for expected in PAGES[page]:
        assert expected in out.stdout
