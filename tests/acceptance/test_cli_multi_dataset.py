"""``memflow search --dataset a --dataset b``: one ranked list with each result's dataset."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from memflow import Memory
from memflow.cli.search import human
from memflow.embed.factory import make_embedder

from ..conftest import REPO
from .test_cli_foundation import js, run

QUERY = "Who replaced the oven thermostat in the bakery?"
DRAFTS = {
    "garden": {"name": "Tomato planting", "summary": "Aiko planted tomatoes by the south fence."},
    "kitchen": {
        "name": "Oven repair",
        "summary": "Bruno replaced the oven thermostat in the bakery.",
    },
    "attic": {"name": "Attic note", "summary": QUERY},  # a better match, never searched
}


def test_two_dataset_flags_one_list_with_datasets(db_url: str) -> None:
    with Memory.open(db_url, embedder=make_embedder("hash")) as mem:  # what --embedder hash opens
        for name, draft in DRAFTS.items():
            mem.dataset(name).add_episode(draft)
        related = mem.search(QUERY, datasets=["garden", "kitchen"], display="highly_related")
    shown = human(related, explain=False)
    assert shown.startswith(related.context) and "1. [kitchen] Oven repair" in shown

    both = js(run(db_url, "search", QUERY, "--dataset", "garden", "-d", "kitchen",
                  "--display", "summary", "--json"))  # fmt: skip
    assert [(r["dataset"], r["name"]) for r in both["results"]] == [
        ("kitchen", "Oven repair"),
        ("garden", "Tomato planting"),
    ]
    assert "Attic" not in json.dumps(both)
    text = run(db_url, "search", QUERY, "--dataset", "garden", "--dataset", "kitchen",
               "--display", "summary", "--explain").stdout  # fmt: skip
    assert "1. [kitchen] Oven repair" in text and "2. [garden] Tomato planting" in text

    # One dataset keeps today's output: no dataset in the text.
    one = run(db_url, "search", QUERY, "--dataset", "kitchen", "--display", "summary").stdout
    assert "1. Oven repair" in one and "[kitchen]" not in one


def test_readme_several_datasets_example_runs(db_url: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Several datasets in one search")
    section = readme[start : readme.index("\n## ", start + 1)]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "1 work Deploy freeze"
    assert "2 home 搬家" in out.stdout
