"""Replica settings come from arguments, then MEMFLOW_* variables, then the defaults in
memflow/config.py; the router refuses values it cannot use, naming the variable to fix."""

from __future__ import annotations

import pytest

from memflow.config import ReplicaSettings, replica_settings
from memflow.db.replicas import check_settings, parse_lsn
from memflow.errors import ConfigurationError


def test_urls_come_from_the_argument_then_the_comma_separated_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMFLOW_READ_REPLICA_URLS", " postgresql://a/m , postgres://b/m ,, ")
    assert replica_settings().urls == ("postgresql+psycopg://a/m", "postgresql+psycopg://b/m")
    assert replica_settings(["postgresql://c/m"]).urls == ("postgresql+psycopg://c/m",)
    assert replica_settings("postgresql://d/m").urls == ("postgresql+psycopg://d/m",)
    monkeypatch.delenv("MEMFLOW_READ_REPLICA_URLS")
    assert replica_settings().urls == ()


def test_defaults_live_in_one_place_and_variables_override_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in (
        "MEMFLOW_READ_CONSISTENCY",
        "MEMFLOW_REPLICA_MAX_WAIT",
        "MEMFLOW_REPLICA_RETRY_AFTER",
    ):
        monkeypatch.delenv(var, raising=False)
    base = ReplicaSettings()
    got = replica_settings()
    assert (got.consistency, got.max_wait_s, got.retry_after_s) == (
        base.consistency, base.max_wait_s, base.retry_after_s
    )  # fmt: skip
    monkeypatch.setenv("MEMFLOW_READ_CONSISTENCY", "eventual")
    monkeypatch.setenv("MEMFLOW_REPLICA_MAX_WAIT", "0.25")
    got = replica_settings()
    assert (got.consistency, got.max_wait_s) == ("eventual", 0.25)
    assert replica_settings(consistency="read_your_writes", max_wait_s=2).max_wait_s == 2.0


@pytest.mark.parametrize(
    ("var", "value", "named"),
    [
        ("MEMFLOW_READ_CONSISTENCY", "strong", "MEMFLOW_READ_CONSISTENCY"),
        ("MEMFLOW_REPLICA_MAX_WAIT", "soon", "MEMFLOW_REPLICA_MAX_WAIT"),
        ("MEMFLOW_REPLICA_RETRY_AFTER", "-1", "MEMFLOW_REPLICA_RETRY_AFTER"),
    ],
)
def test_unusable_values_are_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, named: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigurationError, match=named):
        check_settings(replica_settings())


def test_lsns_compare_as_byte_positions() -> None:
    assert parse_lsn("0/0") == 0 and parse_lsn(None) == 0
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848
    assert parse_lsn("1/0") > parse_lsn("0/FFFFFFFF")
