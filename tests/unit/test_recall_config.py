"""Every tunable of search lives in RecallConfig, with where its value came from, and none was
chosen on a test half."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from memflow.recall.config import CHOSEN_ON, RecallConfig, chosen_on, knob
from memflow.recall.options import SearchOptions

REPO = Path(__file__).resolve().parents[2]
RECALL = REPO / "memflow" / "recall"
# The defaults of a search call's own arguments: SearchOptions holds them, RecallConfig does not.
PER_CALL = {"mode", "top_k", "display", "budget_tokens", "token_counter", "timezone"}


@pytest.mark.parametrize("name", sorted(RecallConfig.model_fields))
def test_every_field_records_where_its_value_came_from(name: str) -> None:
    source = chosen_on(name)
    assert source in CHOSEN_ON
    assert "test" not in source and "test" not in CHOSEN_ON[source].replace("unit tests", ""), (
        f"RecallConfig.{name} was chosen on a test half ({source}): choose it on a tune half"
    )


def test_the_per_call_defaults_are_search_options() -> None:
    assert not PER_CALL & set(RecallConfig.model_fields)
    assert set(SearchOptions.model_fields) >= PER_CALL


def test_the_sources_name_no_test_half() -> None:
    assert not [s for s in CHOSEN_ON if "test" in s]
    assert all("test half" not in text for text in CHOSEN_ON.values())


def test_a_field_without_a_source_is_refused() -> None:
    class Bare(RecallConfig):
        extra_knob: float = 0.5  # no chosen_on

    class Chosen(RecallConfig):
        other_knob: float = knob(0.5, "reasoning")

    with pytest.raises(KeyError, match="records no source"):
        chosen_on("extra_knob", Bare)
    assert chosen_on("other_knob", Chosen) == "reasoning"


def _stragglers(path: Path) -> list[str]:
    """Tunables outside RecallConfig: a module-level constant that is a number or holds a float
    (a mapping of costs), or a float literal other than 0 and 1 anywhere in the module. An order
    of ints (PATH_PREFERENCE) or a date is no tunable."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        number = isinstance(value, ast.Constant) and type(value.value) in (int, float)
        floats = any(
            isinstance(c, ast.Constant) and type(c.value) is float for c in ast.walk(value)
        )
        if isinstance(target, ast.Name) and target.id.isupper() and (number or floats):
            found.append(f"{path.name}:{node.lineno} {target.id}")
    for c in ast.walk(tree):
        if isinstance(c, ast.Constant) and type(c.value) is float and c.value not in (0.0, 1.0):
            found.append(f"{path.name}:{c.lineno} {c.value}")
    return found


def test_no_tunable_outside_recall_config() -> None:
    # options.py holds the per-call defaults (SearchOptions), no tunable; graphcache.py the
    # memory bounds of a cache that changes no result (tests/integration/test_graph_cache.py).
    skipped = ("config.py", "options.py", "graphcache.py")
    modules = [p for p in sorted(RECALL.glob("*.py")) if p.name not in skipped]
    found = [s for p in modules for s in _stragglers(p)]
    assert found == [], f"constants outside RecallConfig: {found}: make them fields with a source"


def test_the_straggler_check_sees_a_constant(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("HIT = {'a': 0.05}\nLIMIT = 64\n\ndef f(x):\n    return x * 0.3\n")
    assert len(_stragglers(probe)) == 4  # HIT, LIMIT and the two floats


def test_recall_sql_binds_its_limits() -> None:
    sql = (REPO / "sql" / "recall.sql").read_text(encoding="utf-8")
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    limits = re.findall(r"\bLIMIT\s+(\d+)", body) + re.findall(r"\bTHEN\s+\d+\s+ELSE\s+(\d+)", body)
    assert set(limits) <= {"1"}, f"numbers in LIMITs of sql/recall.sql: {limits}: bind them"


def test_the_present_step_survives_the_order_rounding() -> None:
    # Units are ordered by their rank score rounded to nine places (memflow.recall.render): a
    # newer answer placed ``present_ahead`` ahead of an outdated statement must stay ahead.
    step = RecallConfig().present_ahead
    for score in (0.0, 0.1234567891, 0.5, 0.9999999994, 1.7):
        assert round(score - step, 9) < round(score, 9)
