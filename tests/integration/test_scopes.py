"""Scopes inside one dataset: two users' memories never reach each other's searches, not even
through an entity both mention; forgetting keeps provenance (and so scope) consistent."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memflow import InvalidInput, Memory
from tests.integration.test_memorize import rows

# Both users mention the same person (one Entity node); nothing else is shared.
ALICE = """# Backup rota

## Weekly
Jonas Brandt moves the warehouse database backups to Tuesday night from now on.
"""
BOB = """# Home news

## Pets
Jonas Brandt adopted a grey cat called Pixel and feeds it tuna every morning.
"""
CAROL_ZH = """# 周报

## 数据库
王小明 负责把数据库备份迁移到新的服务器。
"""

DISPLAYS = ("summary", "detail", "highly_related")


def _documents(resp: Any) -> set[uuid.UUID]:
    docs = {c.document_id for r in resp.results for c in r.citations}
    docs |= {c.document_id for u in resp.context_units for c in u.citations}
    return docs


@pytest.fixture
def two_users(mem: Memory) -> tuple[Any, uuid.UUID, uuid.UUID]:
    ds = mem.dataset("team")
    a = ds.memorize(ALICE, scope={"user": "alice", "session": "s1"}, metadata={"kind": "work"})
    b = ds.memorize(BOB, scope={"user": "bob"}, metadata={"kind": "home"})
    a_id, b_id = a.documents[0].id, b.documents[0].id
    assert a_id is not None and b_id is not None
    return ds, a_id, b_id


def test_the_shared_entity_is_one_node_with_both_documents(
    two_users: tuple[Any, uuid.UUID, uuid.UUID], db_url: str
) -> None:
    _, a_id, b_id = two_users
    sources = rows(
        db_url,
        "SELECT s.document_id FROM memflow.node n JOIN memflow.node_source s "
        "ON s.dataset_id = n.dataset_id AND s.node_id = n.id "
        "WHERE n.kind = 'Entity' AND n.name = 'Jonas Brandt'",
    )
    assert {r[0] for r in sources} == {a_id, b_id}
    stored = rows(db_url, "SELECT id, scope, metadata FROM memflow.document ORDER BY source")
    assert {r[0]: (r[1], r[2]) for r in stored} == {
        a_id: ({"user": "alice", "session": "s1"}, {"kind": "work"}),
        b_id: ({"user": "bob"}, {"kind": "home"}),
    }


@pytest.mark.parametrize("display", DISPLAYS)
def test_a_user_never_sees_the_other_users_memories(
    two_users: tuple[Any, uuid.UUID, uuid.UUID], display: str
) -> None:
    ds, a_id, b_id = two_users
    # The query names the shared person and Bob's cat: unscoped, Bob's episode wins.
    query = "What does Jonas Brandt feed the grey cat Pixel?"
    everyone = ds.search(query, display=display)
    assert b_id in _documents(everyone)
    for user, mine, theirs, word in (
        ("alice", a_id, b_id, "Pixel"),
        ("bob", b_id, a_id, "backups"),
    ):
        resp = ds.search(query, display=display, scope={"user": user})
        assert resp.results, f"{user} sees their own memory"
        assert _documents(resp) == {mine}
        assert word not in resp.context
        assert all(r.scope["user"] == user for r in resp.results)
        assert theirs not in {c.document_id for r in resp.results for c in r.citations}
    alice = ds.search(query, display=display, scope={"user": "alice"})
    assert all(r.metadata == {"kind": "work"} for r in alice.results)


@pytest.mark.parametrize("mode", ("vector", "lexical"))
def test_baselines_are_scoped_too(two_users: tuple[Any, uuid.UUID, uuid.UUID], mode: str) -> None:
    ds, a_id, b_id = two_users
    resp = ds.search("Jonas Brandt cat Pixel tuna backups", mode=mode, scope={"user": "alice"})
    assert resp.results and _documents(resp) == {a_id}
    resp = ds.search("Jonas Brandt cat Pixel tuna backups", mode=mode, where={"kind": "home"})
    assert resp.results and _documents(resp) == {b_id}


def test_scope_subsets_where_and_no_match(two_users: tuple[Any, uuid.UUID, uuid.UUID]) -> None:
    ds, a_id, _ = two_users
    query = "Jonas Brandt"
    assert _documents(ds.search(query, scope={"session": "s1"})) == {a_id}
    assert _documents(ds.search(query, scope={"user": "alice", "session": "s1"})) == {a_id}
    assert ds.search(query, scope={"user": "alice", "session": "s2"}).results == []
    assert ds.search(query, scope={"user": "bob"}, where={"kind": "work"}).results == []
    assert ds.search(query, scope={"agent": "nobody"}).results == []


def test_the_same_text_for_two_users_is_two_documents(mem: Memory, db_url: str) -> None:
    ds = mem.dataset("twice")
    a = ds.memorize(CAROL_ZH, scope={"user": "u1"}).documents[0]
    b = ds.memorize(CAROL_ZH, scope={"user": "u2"}).documents[0]
    again = ds.memorize(CAROL_ZH, scope={"user": "u2"}).documents[0]
    assert a.status == b.status == "written" and again.status == "skipped"
    assert a.id != b.id
    for user, doc in (("u1", a.id), ("u2", b.id)):
        assert _documents(ds.search("数据库备份", scope={"user": user})) == {doc}


def test_forget_keeps_scopes_consistent(
    two_users: tuple[Any, uuid.UUID, uuid.UUID], db_url: str
) -> None:
    ds, a_id, b_id = two_users
    ds.forget(document_id=b_id)
    assert ds.search("Jonas Brandt cat Pixel", scope={"user": "bob"}).results == []
    alice = ds.search("Jonas Brandt cat Pixel", scope={"user": "alice"})
    assert _documents(alice) == {a_id}
    # The shared entity stays, supported by Alice's document alone.
    sources = rows(
        db_url,
        "SELECT s.document_id FROM memflow.node n JOIN memflow.node_source s "
        "ON s.dataset_id = n.dataset_id AND s.node_id = n.id "
        "WHERE n.kind = 'Entity' AND n.name = 'Jonas Brandt'",
    )
    assert [r[0] for r in sources] == [a_id]


def test_drafts_carry_scope_and_metadata(mem: Memory, seed_drafts: list[dict[str, Any]]) -> None:
    ds = mem.dataset("drafts")
    one = ds.add_episodes(seed_drafts[:1], scope={"agent": "planner"}, metadata={"n": 1})
    two = ds.add_episodes(seed_drafts[1:2], scope={"agent": "critic"}, metadata={"n": 2})
    query = seed_drafts[0]["name"]
    assert isinstance(query, str)
    # Drafts have no chunks (nothing to cite): compare the episodes found.
    planner = ds.search(query, scope={"agent": "planner"})
    assert {r.episode_id for r in planner.results} == set(one.episode_ids)
    later = ds.search(query, where={"n": {"gte": 2}})
    assert {r.episode_id for r in later.results} == set(two.episode_ids)
    assert ds.search(query).results[0].episode_id in one.episode_ids


@pytest.mark.parametrize(
    ("scope", "needle"),
    [
        ({"tenant": "x"}, "tenant"),
        ({"user": ""}, "user"),
        ({"user": 7}, "user"),
        ("alice", "scope"),
    ],
)
def test_bad_scopes_are_rejected_naming_the_key(mem: Memory, scope: Any, needle: str) -> None:
    ds = mem.dataset("bad")
    with pytest.raises(InvalidInput, match=needle):
        ds.memorize(ALICE, scope=scope)
    with pytest.raises(InvalidInput, match=needle):
        ds.search("anything", scope=scope)
    with pytest.raises(InvalidInput, match=needle):
        ds.add_episodes([{"name": "n", "summary": "s"}], scope=scope)


def test_the_async_door_takes_the_same_scopes(db_url: str) -> None:
    import asyncio

    from memflow import AsyncMemory
    from memflow.embed.hash import HashEmbedder

    async def go() -> None:
        async with AsyncMemory.open(db_url, embedder=HashEmbedder(384)) as mem:
            ds = mem.dataset("team")
            a = await ds.memorize(ALICE, scope={"user": "alice"}, metadata={"kind": "work"})
            await ds.memorize(BOB, scope={"user": "bob"})
            await ds.add_episodes([{"name": "n", "summary": "Pixel"}], scope={"user": "carl"})
            resp = await ds.search("Jonas Brandt cat Pixel", scope={"user": "alice"})
            assert _documents(resp) == {a.documents[0].id}
            resp = await ds.search("Jonas Brandt cat Pixel", where={"kind": {"exists": False}})
            assert resp.results and a.documents[0].id not in _documents(resp)
            with pytest.raises(InvalidInput, match="'bogus'"):
                await ds.search("x", where={"kind": {"bogus": 1}})

    asyncio.run(go())


def test_import_and_procedures_respect_scopes(mem: Memory, db_url: str) -> None:
    from tests.support.runbooks import RUNBOOK_EN

    ds = mem.dataset("ops")
    drafts = [[{"name": "Kiln check", "summary": "Ines checks the kiln every Monday."}]]
    [imported] = ds.import_episodes(drafts, scope={"agent": "potter"}, metadata={"room": 4})
    stored = rows(db_url, "SELECT scope, metadata FROM memflow.document WHERE id = %s",
                  imported.document_id)  # fmt: skip
    assert stored == [({"agent": "potter"}, {"room": 4})]
    ds.memorize(RUNBOOK_EN, content_type="markdown", extractor="rules", scope={"user": "sre"})
    query = "How do we roll back a release?"
    assert ds.search(query, mode="procedural", scope={"user": "sre"}).results
    assert ds.search(query, mode="procedural", scope={"user": "intern"}).results == []
    assert ds.search(query, mode="procedural", where={"room": 4}).results == []


def test_a_scoped_search_ranks_as_if_the_other_scopes_were_not_there(mem: Memory) -> None:
    """Entity specificity (its degree, the episode count) is counted over what the search may
    see: Bob's many notes about the same person change nothing in Alice's ranking."""
    alone = mem.dataset("alone")
    alone.memorize(ALICE, scope={"user": "alice"})
    team = mem.dataset("crowd")
    team.memorize(ALICE, scope={"user": "alice"})
    for i in range(6):
        team.memorize(
            f"# Note {i}\n\n## Visit {i}\nJonas Brandt came by on day {i} and fixed shelf {i}.\n",
            scope={"user": "bob"},
        )
    query = "What does Jonas Brandt do with the backups?"
    want = alone.search(query, display="highly_related")
    got = team.search(query, display="highly_related", scope={"user": "alice"})
    assert [r.score for r in got.results] == pytest.approx([r.score for r in want.results])
    assert got.context == want.context
    unscoped = team.search(query, display="highly_related")
    assert len(unscoped.results) > len(got.results)  # Bob's notes are there, just not seen
