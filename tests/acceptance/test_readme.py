"""The README's Python example runs as written (against the test database, hash embedder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from ..conftest import REPO


def test_readme_python_example_runs(db_url: str) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Python") : text.index("## Command line")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    code = blocks[0] + blocks[1]
    env = {**os.environ, "MEMFLOW_DATABASE_URL": db_url, "MEMFLOW_EMBEDDER": "hash"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "'written': 1" in out.stdout
    assert "Tom reviews every schema change" in out.stdout
