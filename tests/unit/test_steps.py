"""memflow.db.steps: transaction bodies and operations as generators (no database)."""

from __future__ import annotations

from typing import Any

import pytest

from memflow.db.steps import Body, advance, one_step, run_body


class Recorder:
    """Stands in for a Connection: records what the steps ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, name: str) -> str:
        self.ran.append(name)
        return name.upper()


def test_a_body_gets_each_step_result_and_computes_between_steps() -> None:
    def body() -> Body[str]:
        a: str = yield lambda conn: conn.run("recall")
        b: str = yield lambda conn: conn.run(f"project after {a}")
        return f"{a} | {b}"

    conn = Recorder()
    assert run_body(conn, body()) == "RECALL | PROJECT AFTER RECALL"  # type: ignore[arg-type]
    assert conn.ran == ["recall", "project after RECALL"]


def test_advance_returns_the_result_and_throws_errors_in() -> None:
    def op() -> Any:
        try:
            yield "first"
        except KeyError:
            return "handled"
        return "plain"

    gen = op()
    assert advance(gen, None, None) == (False, "first")
    assert advance(gen, None, KeyError("x")) == (True, "handled")
    gen = op()
    advance(gen, None, None)
    assert advance(gen, "value", None) == (True, "plain")
    gen = op()
    advance(gen, None, None)
    with pytest.raises(ValueError):
        advance(gen, None, ValueError("not handled"))


def test_one_step() -> None:
    conn = Recorder()
    assert run_body(conn, one_step(lambda c: c.run("only"))) == "ONLY"  # type: ignore[arg-type]
