"""`import memflow`, `import memflow.cli` and `memflow --version` load none of the heavy
libraries (issue 28: a CLI that starts at once). Not timed: the import lists of child processes
(`python -X importtime`) say what was loaded; benchmarks/cli_start.py measures the time."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ..conftest import REPO

# Libraries `memflow --version` has no use for: the database stack, numpy, the LLM client and
# the servers' frameworks, OpenTelemetry (memflow.trace imports it only when spans are wanted).
HEAVY = ("sqlalchemy", "psycopg", "numpy", "openai", "fastapi", "mcp", "opentelemetry")
CONSOLE_SCRIPT = "import sys; from memflow.cli import main; sys.exit(main())"  # [project.scripts]


def loaded(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The process `python -X importtime ARGS` and the top-level packages it imported."""
    res = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", res.stderr, re.MULTILINE)
    return res, {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "args",
    [
        ("-c", "import memflow; import memflow.cli"),
        ("-c", CONSOLE_SCRIPT, "--version"),
        ("-m", "memflow", "--version"),
    ],
    ids=["import", "console-script-version", "python-m-version"],
)
def test_starting_loads_no_heavy_library(args: tuple[str, ...]) -> None:
    res, packages = loaded(*args)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "memflow" in packages
    if "--version" in args:
        assert re.fullmatch(r"memflow \S+\n", res.stdout), res.stdout
    assert not packages & set(HEAVY), f"loaded at start: {sorted(packages & set(HEAVY))}"


def test_the_check_sees_a_heavy_import() -> None:
    """The same check on the facade, which needs the database stack, finds it."""
    res, packages = loaded("-c", "import memflow; memflow.Memory")
    assert res.returncode == 0, res.stderr[-2000:]
    assert {"sqlalchemy", "psycopg", "numpy"} <= packages


def test_the_console_script_freezes_the_heap_before_exit() -> None:
    """What the process loaded is frozen when the command returns, so interpreter shutdown does
    not walk it in a last collection (benchmarks/cli_start.py measures the time it saves)."""
    code = (
        "import contextlib, gc, io, sys; from memflow.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): code = main([])\n"
        "print(code, gc.get_freeze_count())"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=REPO)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    code_, frozen = map(int, res.stdout.split())
    assert code_ == 0 and frozen > 10_000, res.stdout
