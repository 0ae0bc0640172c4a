"""docs/cli.md is generated from --help and must match the current parsers."""

from __future__ import annotations

from memflow.cli.docs import render

from ..conftest import REPO


def test_cli_reference_is_current() -> None:
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == render(), "run: python -m memflow.cli.docs > docs/cli.md"


def test_every_command_has_help_and_json() -> None:
    text = render()
    for section in text.split("\n## ")[1:]:
        title = section.splitlines()[0]
        if title in ("`memflow db`",):
            continue
        assert "--json" in section, f"{title} lacks --json"
        assert "--database-url" in section, f"{title} lacks --database-url"
