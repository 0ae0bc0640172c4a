"""The frameworks are optional: memflow (its API, its doors, its CLI) imports none of them, and
an adapter without its extra says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("langchain", "langgraph", "langsmith", "llama_index")  # module name prefixes


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_memflow_imports_no_framework() -> None:
    out = run(
        "import sys, memflow, memflow.aio, memflow.service, memflow.cli.app, "
        "memflow.integrations, memflow.integrations.common, memflow.integrations.items\n"
        "memflow.AsyncMemory\n"
        f"print(sorted(m for m in sys.modules if m.startswith({FRAMEWORKS!r})))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("langgraph", "langgraph", "langgraph"),
        ("llama_index", "llama_index", "llama-index"),
    ],
)
def test_an_adapter_without_its_extra_names_it(module: str, blocked: str, extra: str) -> None:
    out = run(
        f"import sys\nsys.modules[{blocked!r}] = None\n"
        "try:\n"
        f"    import memflow.integrations.{module}\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ConfigurationError")
    assert f"pip install 'memflow[{extra}]'" in out.stdout
