"""The agent examples run as a user runs them (a subprocess on the test database, hash embedder,
the fake chat model): a fact told in one conversation reaches the model's prompt in a later one,
and the model answers with it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import REPO

EXAMPLES = [
    ("langchain_agent.py", "14 July", "When is Lou's birthday?"),
    ("langgraph_agent.py", "12 Quay Street", "Where is Lou's flat?"),
    ("llama_index_agent.py", "Thursdays at 6 pm", "When is Lou's piano lesson?"),
]


@pytest.mark.parametrize(("script", "fact", "question"), EXAMPLES)
def test_the_example_agent_recalls_the_fact(
    db_url: str, script: str, fact: str, question: str
) -> None:
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / script)],
        capture_output=True, text=True, env=env, timeout=300, cwd=REPO, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    conversation, _, prompt = out.stdout.partition("\nthe model's last ")
    assert fact in prompt  # what memflow recalled was put in front of the model
    answer = conversation.split(question, 1)[1]
    assert "assistant: You told me:" in answer and fact in answer
