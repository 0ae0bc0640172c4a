"""What a newcomer hits first (issue 13): bad URLs, connection and permission errors, exit codes."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from memflow.cli.app import main
from memflow.config import libpq_url
from memflow.errors import ConfigurationError
from memflow.memory import Memory

from ..conftest import REPO

SEED = REPO / "examples" / "seed_episodes.json"
ACCEPTED = "postgresql://user:password@host:port/dbname"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args, "--embedder", "hash"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _as(url: str, **parts: str) -> str:
    return make_url(url).set(**parts).render_as_string(hide_password=False)


@pytest.fixture
def plain_role(pg_admin_url: str) -> Iterator[tuple[str, str]]:
    """A LOGIN role that is no superuser: (name, password)."""
    role, secret = f"mf_plain_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(libpq_url(pg_admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}'")
    yield role, secret
    with psycopg.connect(libpq_url(pg_admin_url), autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        conn.execute(f"DROP ROLE {role}")


@pytest.mark.parametrize("url", ["not a url", "mysql://u:p@localhost/memflow"])
def test_a_url_memflow_cannot_use_names_the_accepted_forms(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    code, out, err = cli(capsys, "stats", "--database-url", url)
    assert code == 1 and out == ""
    assert ACCEPTED in err and "postgres://" in err and "postgresql+psycopg://" in err
    assert "ArgumentError" not in err and "ModuleNotFoundError" not in err
    with pytest.raises(ConfigurationError, match="postgresql\\+psycopg://"):
        Memory.open(url, embedder="hash")


def test_connection_errors_say_what_to_check(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    refused = make_url(db_url).set(host="127.0.0.1", port=1, query={})
    refused = refused.render_as_string(hide_password=False)
    code, _, err = cli(capsys, "stats", "--database-url", refused)
    assert code == 1 and "is the PostgreSQL server running" in err and "host and port" in err
    no_db = _as(db_url, database="mf_no_such_database")
    code, _, err = cli(capsys, "stats", "--database-url", no_db)
    assert code == 1 and "create that database" in err and "retry" not in err
    bad_user = _as(db_url, username="mf_nobody", password="wrong")
    code, _, err = cli(capsys, "stats", "--database-url", bad_user)
    assert code == 1 and "check the user name and password" in err and "retry" not in err


def test_upgrade_as_a_plain_owner_says_a_superuser_creates_the_extensions(
    capsys: pytest.CaptureFixture[str], fresh_db: str, plain_role: tuple[str, str]
) -> None:
    role, secret = plain_role
    with psycopg.connect(libpq_url(fresh_db), autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {make_url(fresh_db).database} OWNER TO {role}")
    as_owner = _as(fresh_db, username=role, password=secret)
    code, _, err = cli(capsys, "db", "upgrade", "--database-url", as_owner)
    assert code == 1
    assert 'permission denied to create extension "vector"' in err
    assert "a superuser must run `CREATE EXTENSION vector; CREATE EXTENSION pg_trgm;`" in err
    with psycopg.connect(libpq_url(fresh_db), autocommit=True) as conn:
        conn.execute(f"REASSIGN OWNED BY {role} TO CURRENT_USER")
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"ALTER DATABASE {make_url(fresh_db).database} OWNER TO CURRENT_USER")


def test_memorize_a_missing_file_fails_on_stderr_and_creates_no_dataset(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.md")
    code, out, err = cli(capsys, "memorize", missing, "--dataset", "空的", "--database-url", db_url)
    assert code == 1
    assert missing not in out and "0 written, 0 skipped, 1 failed" in out
    assert err.count(missing) == 1 and "no such file" in err
    assert "1 document failed (exit status 1)" in err
    code, out, _ = cli(capsys, "datasets", "--json", "--database-url", db_url)
    assert code == 0 and "空的" not in [d["name"] for d in json.loads(out)["datasets"]]


def test_drop_asks_or_needs_yes_and_a_missing_dataset_fails(
    capsys: pytest.CaptureFixture[str], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        cli(capsys, "add-episode", str(SEED), "--dataset", "seed", "--database-url", db_url)[0] == 0
    )
    code, _, err = cli(capsys, "datasets", "--drop", "nope", "--yes", "--database-url", db_url)
    assert code == 1 and "no dataset named 'nope'" in err
    code, _, err = cli(capsys, "datasets", "--drop", "seed", "--database-url", db_url)
    assert code == 1 and "deletes 2 episodes and 1 document: add --yes" in err
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    code, _, err = cli(capsys, "datasets", "--drop", "seed", "--database-url", db_url)
    assert code == 1 and "not dropped" in err
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    code, out, _ = cli(capsys, "datasets", "--drop", "seed", "--database-url", db_url)
    assert code == 0 and out.strip() == "dropped seed"
    code, out, _ = cli(capsys, "datasets", "--database-url", db_url)
    assert "seed" not in out


def test_db_current_exits_non_zero_when_behind(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    assert cli(capsys, "db", "current", "--database-url", db_url)[0] == 0
    with psycopg.connect(libpq_url(db_url), autocommit=True) as conn:
        conn.execute("UPDATE memflow.alembic_version SET version_num = '0002'")
    code, out, _ = cli(capsys, "db", "current", "--database-url", db_url)
    assert code == 1 and "current: 0002" in out and "memflow db upgrade" in out


def test_version_and_bare_memflow(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.startswith("memflow 0.")
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: memflow") and "COMMAND" in out and "Traceback" not in out


def test_every_command_has_a_description() -> None:
    from memflow.cli.app import build_parser

    def walk(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str | None]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    yield f"{path} {name}", child.description
                    yield from walk(child, f"{path} {name}")

    found = dict(walk(build_parser(), "memflow"))
    assert len(found) > 15
    assert all(found.values()), [k for k, v in found.items() if not v]


def test_db_psql_passes_its_arguments_to_psql(db_url: str) -> None:
    psql_args = ["-At", "-c", "select 40 + 2"]
    res = subprocess.run(
        [sys.executable, "-m", "memflow.cli", "db", "psql", "--database-url", db_url, *psql_args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "42"


def test_counts_are_pluralised_and_show_hints_a_real_listing(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    one = tmp_path / "one.json"
    one.write_text(
        json.dumps(
            {
                "name": "一次评审",
                "summary": "Ana reviewed the cache patch.",
                "facets": [
                    {
                        "search_text": "评审结果",
                        "points": [{"search_text": "The patch was approved."}],
                    }
                ],
                "entities": [{"name": "Ana"}],
            }
        ),
        encoding="utf-8",
    )
    code, out, err = cli(
        capsys, "add-episode", str(one), "--dataset", "p", "--database-url", db_url
    )
    assert code == 0, err
    assert "1 episode, 1 facet, 1 point, 1 entity," in out and "1 points" not in out
    document = json.loads(cli(capsys, "datasets", "--json", "--database-url", db_url)[1])[
        "datasets"
    ]
    assert [d["documents"] for d in document if d["name"] == "p"] == [1]
    listing = cli(capsys, "show", "--dataset", "p", "--json", "--database-url", db_url)[1]
    episode = json.loads(listing)["episodes"][0]["id"]
    code, out, _ = cli(
        capsys, "forget", "--episode", str(episode), "-d", "p", "--database-url", db_url
    )
    assert code == 0 and "removed 1 document, " in out and "1 documents" not in out
    code, _, err = cli(capsys, "show", str(uuid.uuid4()), "-d", "p", "--database-url", db_url)
    assert code == 1 and "`memflow show --dataset p`" in err


def test_a_dataset_is_searched_with_the_embedder_it_was_written_with(
    capsys: pytest.CaptureFixture[str], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMFLOW_EMBEDDER", raising=False)
    url = ["--database-url", db_url]
    assert main(["add-episode", str(SEED), "-d", "h", "--embedder", "hash:64", *url]) != 0
    capsys.readouterr()  # the store is 384-dim: a 64-dim hash embedder is refused
    assert main(["add-episode", str(SEED), "-d", "h", "--embedder", "hash", *url]) == 0
    capsys.readouterr()
    assert main(["search", "鉴权中间件", "-d", "h", "--json", *url]) == 0  # no --embedder
    found = json.loads(capsys.readouterr().out)
    assert found["results"] and "鉴权中间件" in found["context"]
    assert main(["datasets", "--json", *url]) == 0
    listed = json.loads(capsys.readouterr().out)["datasets"]
    assert [(d["name"], d["embedder"]) for d in listed] == [("h", "hash-384")]


@pytest.mark.parametrize("display", ["summary", "detail", "highly_related"])
def test_budget_tokens_bound_text_and_json_in_every_display(
    capsys: pytest.CaptureFixture[str], db_url: str, display: str
) -> None:
    from memflow.recall.render import count_tokens

    url = ["--database-url", db_url, "-d", "b"]
    assert main(["add-episode", str(SEED), *url, "--embedder", "hash"]) == 0
    capsys.readouterr()
    query = ["search", "鉴权中间件 API 流式返回", "--display", display, *url, "--embedder", "hash"]
    assert main([*query, "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    sizes = sorted(count_tokens(r["context"]) for r in full["results"] if r["context"])
    assert len(full["results"]) == 2 and sizes
    budget = sizes[0] if display != "highly_related" else max(1, count_tokens(full["context"]) // 2)
    assert main([*query, "--json", "--budget-tokens", str(budget)]) == 0
    cut = json.loads(capsys.readouterr().out)
    assert count_tokens(cut["context"]) <= budget
    assert sum(count_tokens(r["context"]) for r in cut["results"]) <= budget or (
        display == "highly_related"  # per-result contexts there are the episodes' units
    )
    if display != "highly_related":
        assert [bool(r["context"]) for r in cut["results"]].count(True) == 1
        assert any("1 of 2 episode contexts fit" in n for n in cut["notes"])
        assert main([*query, "--budget-tokens", str(budget)]) == 0
        out = capsys.readouterr()
        assert "[context over the budget]" in out.out and "1 of 2 episode contexts" in out.err
    assert main([*query, "--json", "--budget-tokens", "1"]) == 0
    none = json.loads(capsys.readouterr().out)
    assert none["context"] == ""
    assert all(r["context"] == "" for r in none["results"])
    assert any("fits in the budget of 1 tokens" in n for n in none["notes"]), none["notes"]


NOTES = [
    "# Cache rollout\n\nThe cache goes live on Monday. Ada owns the cache rollout. "
    "The cache keeps entries for ten minutes.",
    "# 周会纪要\n\n决定：下周四发布新版本。张伟负责发布。",
]


@pytest.mark.parametrize("mode", ["vector", "lexical"])
def test_baselines_list_each_episode_once_and_say_scores_are_costs(
    capsys: pytest.CaptureFixture[str], db_url: str, mode: str
) -> None:
    url = ["--database-url", db_url, "-d", "n"]
    for i, note in enumerate(NOTES):
        path = Path(f"/tmp/mf-newcomer-{uuid.uuid4().hex}-{i}.md")
        path.write_text(note, encoding="utf-8")
        try:
            assert cli(capsys, "memorize", str(path), *url)[0] == 0
        finally:
            path.unlink()
    query = ["search", "cache rollout owner", "--mode", mode, *url]
    code, out, _ = cli(capsys, *query, "--json")
    payload = json.loads(out)
    ids = [r["episode_id"] for r in payload["results"]]
    assert code == 0 and ids and len(ids) == len(set(ids)), payload["results"]
    assert payload["score_meaning"].startswith("cost, lower is better")
    assert all(r["score"] >= 0 for r in payload["results"])  # a cost, never negative
    scores = [r["score"] for r in payload["results"]]
    assert scores == sorted(scores)
    code, out, _ = cli(capsys, *query)
    assert out.startswith("score = cost, lower is better")


def test_episodic_json_and_text_say_scores_are_costs(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    url = ["--database-url", db_url, "-d", "s"]
    assert cli(capsys, "add-episode", str(SEED), *url)[0] == 0
    code, out, _ = cli(capsys, "search", "鉴权中间件", *url, "--json")
    assert code == 0 and "lower is better" in json.loads(out)["score_meaning"]
    for extra in ([], ["--explain"], ["--display", "detail"]):
        code, out, _ = cli(capsys, "search", "鉴权中间件", *url, *extra)
        assert code == 0 and out.startswith("score = cost, lower is better"), out


def test_alembic_runs_from_any_directory_with_the_packaged_ini(
    fresh_db: str, tmp_path: Path
) -> None:
    from memflow.db.migrate import alembic_ini, head_revision

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "from memflow.db.migrate import alembic_ini; print(alembic_ini())" in readme
    alembic = Path(sys.executable).parent / "alembic"
    run = [str(alembic), "-c", str(alembic_ini()), "-x", f"url={fresh_db}"]
    done = subprocess.run([*run, "upgrade", "head"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    now = subprocess.run([*run, "current"], cwd=tmp_path, capture_output=True, text=True)
    assert now.returncode == 0 and head_revision() in now.stdout, now.stderr
