"""Every figure in docs/benchmarks/ comes from a committed command and carries a true stamp.

- Each JSON has a stamp (``stamp``) whose commit is in this branch's history, was clean when the
  run started (tracked and untracked files: ``benchmarks.common.stamp``) and contains the script
  the stamp names; a stamp that names its script also names the commit that last changed it.
- Each Markdown file but the index is its script's rendering of its JSON (``markdown(data)`` of
  the module that wrote it): notes reach a page only through the script (``--note``), never by
  hand, and the page names the command that produces it.
- The index (README.md) is prose: links and commands, no figures.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "benchmarks"
# JSON files written before stamps named their script (benchmarks/common.py), each with the
# script that wrote it. New results name their script in the stamp: do not add to this list.
# (Each checked with ``git log --follow``: the commit that added or last rewrote the json ran the
# script named here, and the stamp's commit holds it.)
LEGACY_SCRIPTS = {
    "doors": "benchmarks/doors.py",
    "dump": "benchmarks/dump.py",
    "locomo": "benchmarks/locomo.py",
    "longturns": "benchmarks/longturns.py",
    "reliability": "benchmarks/reliability.py",
    "scale-1M-after": "benchmarks/scale.py",
    "scale-1M-before": "benchmarks/scale.py",
    "scale-1M-foundations": "benchmarks/scale.py",
    "scale-filtered": "benchmarks/scale.py",
}
# Of those, the results written before stamps were nested under ``stamp``: the same fields
# (``benchmarks.common.FLAT_STAMP_FIELDS``) at the top level of the json, read in place.
FLAT_STAMPS = {"locomo"}
HEX40 = re.compile(r"^[0-9a-f]{40}$")


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)


def results() -> list[Path]:
    return sorted(DOCS.glob("*.json"))


def pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name != "README.md")


def stamp_of(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if path.stem in FLAT_STAMPS:
        from benchmarks.common import FLAT_STAMP_FIELDS, stamp_in

        assert isinstance(data, dict) and "stamp" not in data, f"{path.name}: drop it from the list"
        assert all(k in data for k in FLAT_STAMP_FIELDS), f"{path.name}: not a flat stamp"
        return stamp_in(data)
    assert isinstance(data, dict) and isinstance(data.get("stamp"), dict), (
        f"{path.name}: no stamp (benchmarks.common.stamp)"
    )
    return data["stamp"]


def script_of(path: Path) -> str:
    st = stamp_of(path)
    if "script" in st:
        assert path.stem not in LEGACY_SCRIPTS, (
            f"{path.name} names its script: drop it from the list"
        )
        return str(st["script"])
    assert path.stem in LEGACY_SCRIPTS, f"{path.name}: the stamp does not name its script"
    return LEGACY_SCRIPTS[path.stem]


def test_history_is_there() -> None:
    assert git("rev-parse", "HEAD").returncode == 0, "these checks need the git history"
    assert git("rev-parse", "--is-shallow-repository").stdout.strip() == "false"


@pytest.mark.parametrize("path", results(), ids=lambda p: p.name)
def test_stamp_commit_holds_the_script(path: Path) -> None:
    st = stamp_of(path)
    commit, script = st.get("commit", ""), script_of(path)
    assert HEX40.match(commit), f"{path.name}: commit {commit!r} is not a commit id"
    assert git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, (
        f"{path.name}: {commit[:12]} is not in this branch's history"
    )
    assert git("cat-file", "-e", f"{commit}:{script}").returncode == 0, (
        f"{path.name}: {script} does not exist at {commit[:12]}"
    )
    assert st.get("dirty") is False, f"{path.name}: run on a tree with uncommitted changes"
    if "script_commit" in st or path.stem not in LEGACY_SCRIPTS:
        last = git("log", "-1", "--format=%H", commit, "--", script).stdout.strip()
        assert st.get("script_commit") == last, f"{path.name}: script_commit is not {last[:12]}"
        assert st.get("script_in_head") is True, f"{path.name}: the script was not committed"


def test_a_stamp_sees_untracked_files(tmp_path: Path) -> None:
    from benchmarks import common

    stray = REPO / "benchmarks" / f"_stray_{tmp_path.name}.py"
    stray.write_text("# not committed\n", encoding="utf-8")
    try:
        st = common.stamp({}, stray)
    finally:
        stray.unlink()
    assert st["dirty"] is True
    assert any(line.endswith(stray.name) for line in st["changes"])
    assert st["script"] == f"benchmarks/{stray.name}"
    assert st["script_commit"] is None and st["script_in_head"] is False


def test_a_stamp_names_the_calling_script_and_its_commit() -> None:
    from benchmarks import common

    st = common.stamp({"x": 1})
    assert st["script"] == "tests/unit/test_benchmark_docs.py"
    last = git("log", "-1", "--format=%H", "--", st["script"]).stdout.strip() or None
    assert st["script_commit"] == last


def producing_module(page: Path) -> tuple[Any, dict[str, Any]]:
    data_path = page.with_suffix(".json")
    assert data_path.exists(), f"{page.name}: no {data_path.name} beside it (figures need a run)"
    script = script_of(data_path)
    assert script.startswith("benchmarks/") and script.endswith(".py"), script
    module = importlib.import_module(script[:-3].replace("/", "."))
    return module, json.loads(data_path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_page_is_its_scripts_rendering(page: Path) -> None:
    module, data = producing_module(page)
    rendered = module.markdown(data).rstrip() + "\n"
    assert page.read_text(encoding="utf-8") == rendered, (
        f"{page.name} differs from {module.__name__}.markdown of its json: edited by hand? "
        "Re-run the script (or its --render-only) instead"
    )
    assert f"python -m {module.__name__}" in rendered, f"{page.name} does not name its command"


def render_argv(module: Any, stem: str, out: Path) -> list[str]:
    """The script's command line that rewrites ``stem``'s page from its json under ``out``."""
    if module.__name__ == "benchmarks.locomo_replay":
        return ["render", stem, "--out", str(out)]
    source = inspect.getsource(module)  # main, or the parser function main calls
    named = '"--name"' in source or "common.page_args(" in source  # page_args adds --name
    return ["--render-only", "--out", str(out), *(["--name", stem] if named else [])]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_its_script_renders_the_page_again(page: Path, tmp_path: Path) -> None:
    """After a change of a script's template, its pages are rewritten by the script itself
    (``--render-only``), from the json alone: the data stays as it is, the re-render recorded."""
    module, data = producing_module(page)
    shutil.copy(page.with_suffix(".json"), tmp_path)
    module.main(render_argv(module, page.stem, tmp_path))
    assert (tmp_path / page.name).read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
    again = json.loads((tmp_path / f"{page.stem}.json").read_text(encoding="utf-8"))
    assert len(again.pop("rendered")) == len(data.pop("rendered", [])) + 1
    assert again.pop("notes") == data.pop("notes", [])
    assert again == data


# A figure: a decimal, a percentage, a number with a unit or a thousands separator, any number
# of two digits or more (issue and session numbers are written as words or links in the index).
FIGURE = re.compile(r"\d+\.\d+|\d+\s?%|\d{1,3}(?:,\d{3})+|\b\d{2,}\b")


def test_index_is_prose_with_commands_and_links() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for line in index.splitlines():
        if line.startswith("    ") or "python -m benchmarks." in line:
            continue  # a command
        prose = re.sub(r"\([^)]*\.(?:md|json)\)|`[^`]*`", "", line)  # links and code
        assert not FIGURE.search(prose), f"a figure in the index: {line!r}"
    for link in re.findall(r"\]\(([^)#]+)\)", index):
        assert (DOCS / link).exists(), f"README.md links to a missing {link}"
    for page in pages():
        assert f"({page.name})" in index, f"README.md does not list {page.name}"
