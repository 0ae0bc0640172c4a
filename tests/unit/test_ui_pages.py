"""memflow ui without a server: the explain chain and its sum, the tree built from rows,
documents by source, sign-in sessions, and what every page escapes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from memflow.recall.types import PathStep, SearchResult
from memflow.store.history import DocumentVersion
from memflow.ui.access import Access, Refused, SignInNeeded, same_origin
from memflow.ui.pages import document_versions, episode_tree, explain
from memflow.ui.routes import _environment, _safe_next, _when

KEY = "a-key-of-sixteen-chars-or-more"
EP, FACET, POINT, ENTITY = (uuid.uuid4() for _ in range(4))
# The columns of sql/inspect.sql episode_graph besides depth, parent_id, id, kind, supersedes
# and citations.
COLUMNS = (
    "relationship edge_text edge_invalid_at name summary search_text anchor_text description "
    "facet_type time_start time_end valid_at recorded_at created_at invalid_at superseded_by "
    "superseded_by_text position first_idx"
).split()


def result(path: list[PathStep]) -> SearchResult:
    score = sum(s.cost for s in path)
    return SearchResult(rank=1, episode_id=EP, name="e", score=score, best_path="point", path=path)


def test_the_chain_starts_at_the_episode_and_the_costs_sum_to_the_score() -> None:
    path = [
        PathStep(kind="node", node_kind="FacetPoint", id=POINT, text="p", cost=0.21),
        PathStep(kind="edge", relationship="has_point", text="f -> p", cost=0.05),
        PathStep(kind="node", node_kind="Facet", id=FACET, text="f", cost=0.0),
        PathStep(kind="edge", relationship="has_facet", text="e -> f", cost=0.0),
        PathStep(kind="support", node_kind="FacetPoint", text="second point", cost=0.004),
        PathStep(kind="support", node_kind="Episode", text="summary", cost=0.012),
        PathStep(kind="node", node_kind="Episode", id=EP, text="e", cost=-0.01),
    ]
    shown = explain(result(path))
    assert [s.node_kind or s.relationship for s in shown.chain] == [
        "Episode",
        "has_facet",
        "Facet",
        "has_point",
        "FacetPoint",
    ]
    assert [s.text for s in shown.support] == ["second point", "summary"]
    assert shown.total == pytest.approx(0.266) == pytest.approx(result(path).score)
    direct = explain(result([PathStep(kind="node", node_kind="Episode", id=EP, cost=0.3)]))
    assert [s.node_kind for s in direct.chain] == ["Episode"] and direct.support == []


def row(
    depth: int, parent: uuid.UUID | None, node: uuid.UUID, kind: str, **kw: Any
) -> dict[str, Any]:
    base = dict.fromkeys(COLUMNS)
    return {
        **base,
        "depth": depth,
        "parent_id": parent,
        "id": node,
        "kind": kind,
        "supersedes": False,
        "citations": [],
        **kw,
    }


def test_the_tree_puts_each_node_under_the_edge_that_reaches_it() -> None:
    when = datetime(2024, 3, 12, tzinfo=UTC)
    rows = [
        row(0, None, EP, "Episode", name="Orders", summary="the move"),
        row(1, EP, ENTITY, "Entity", name="Priya", relationship="involves_entity", edge_text="x"),
        row(
            1,
            EP,
            FACET,
            "Facet",
            search_text="Decision",
            anchor_text="We moved.",
            relationship="has_facet",
            edge_text="Orders -> Decision",
        ),
        row(
            2,
            FACET,
            POINT,
            "FacetPoint",
            search_text="Priya owns it",
            relationship="has_point",
            edge_text="Decision -> Priya owns it",
            invalid_at=when,
            citations=[["s3", str(EP), "notes.md", "2024-03-12T00:00:00+00:00"]],
        ),
        row(2, FACET, ENTITY, "Entity", name="Priya", relationship="involves_entity"),
    ]
    tree = episode_tree(rows)
    assert (tree.text, tree.detail) == ("Orders", "the move")
    assert [c.kind for c in tree.children] == ["Facet", "Entity"]  # aspects first
    facet = tree.children[0]
    assert (facet.text, facet.detail, facet.edge_text) == (
        "Decision",
        "We moved.",
        "Orders -> Decision",
    )
    point = facet.children[0]
    assert (
        point.closed and point.citations[0].key == "s3" and point.citations[0].source == "notes.md"
    )
    assert [c.kind for c in facet.children] == ["FacetPoint", "Entity"]
    assert (tree.count("FacetPoint"), tree.count("Entity")) == (1, 2)


def test_documents_group_by_source_newest_version_first() -> None:
    def doc(source: str, version: int, status: str) -> DocumentVersion:
        return DocumentVersion(
            id=uuid.uuid4(),
            source=source,
            title="",
            content_type="markdown",
            version=version,
            status=status,
            created_at=datetime.now(UTC),
        )

    grouped = document_versions(
        [doc("a.md", 1, "replaced"), doc("a.md", 2, "current"), doc("b.md", 1, "current")]
    )
    assert [(g.source, [v.version for v in g.versions]) for g in grouped] == [
        ("a.md", [2, 1]),
        ("b.md", [1]),
    ]
    assert grouped[0].current is grouped[0].versions[0]


def test_keys_sessions_and_their_end() -> None:
    access = Access({KEY: frozenset({"notes"})})
    assert access.viewer(f"Bearer {KEY}", None).names == frozenset({"notes"})
    with pytest.raises(SignInNeeded):
        access.viewer("Bearer not-the-key-at-all-000", None)
    with pytest.raises(SignInNeeded):
        access.viewer(None, "a-forged-session-token")
    token = access.sign_in(KEY)
    viewer = access.viewer(None, token)
    assert viewer.session == token and viewer.may_see("notes") and not viewer.may_see("other")
    with pytest.raises(Refused, match="'other'"):
        viewer.check("other")
    access.sign_out(token)
    with pytest.raises(SignInNeeded):
        access.viewer(None, token)
    expired = Access({KEY: None}, ttl=-1)
    with pytest.raises(SignInNeeded):
        expired.viewer(None, expired.sign_in(KEY))
    assert Access({}).viewer(None, None).names is None  # no keys: every dataset (loopback)


def test_forms_count_only_from_this_server_and_sign_in_goes_only_to_its_pages() -> None:
    assert same_origin("http://127.0.0.1:8080", "127.0.0.1:8080")
    assert same_origin(None, "127.0.0.1:8080")  # not a browser's cross-site post
    assert not same_origin("null", "127.0.0.1:8080")
    assert not same_origin("http://evil.example", "127.0.0.1:8080")
    assert _safe_next("/ui/dataset?d=x") == "/ui/dataset?d=x"
    for away in ("//evil.example/ui/", "https://evil.example/", "/ui\\..", "/other"):
        assert _safe_next(away) == "/ui/"


def test_times_read_as_dates_or_utc_minutes() -> None:
    assert _when(datetime(2024, 3, 12, tzinfo=UTC)) == "2024-03-12"
    assert _when("2024-03-12T14:05:00+02:00") == "2024-03-12 12:05 UTC"
    assert _when(None) == "" and _when("yesterday") == "yesterday"


def test_every_template_escapes_what_it_shows() -> None:
    env = _environment()
    hostile = "<script>alert(1)</script>"
    page = env.get_template("error.html").render(
        title=hostile, message=hostile, viewer=None, signed_in=False, path="/ui/"
    )
    assert hostile not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    link = env.globals["link"]("dataset", d='x" onmouseover="y')
    assert link == "/ui/dataset?d=x%22+onmouseover%3D%22y"
