"""Chat roles (memflow.recall.roles) and repeated turns among the highly_related units."""

from __future__ import annotations

import pytest

from memflow.recall.config import RecallConfig
from memflow.recall.pipeline import score_hits
from memflow.recall.render import evidence_units
from memflow.recall.roles import RoleRule, is_assistant
from memflow.recall.scoring import RelationshipIndex
from memflow.recall.types import Bundle, Hit

from .test_scoring import G, nid

ON = RecallConfig(role_penalty=0.05, repeat_turn_penalty=0.05)
CHAT = ("user", "assistant")


@pytest.mark.parametrize(
    ("query", "behind"),
    [
        ("Which tent did I end up buying?", "assistant"),
        ("What should I pack for my trip to the coast?", "assistant"),
        ("我的猫叫什么名字？", "assistant"),
        ("What was the second tent you recommended?", "person"),
        ("Remind me of your list of board games.", "person"),
        ("你之前推荐的那本书叫什么？", "person"),
        ("你推荐过哪些帐篷？", "person"),
        ("你能给我推荐一顶帐篷吗？我下周去海边。", "assistant"),
        ("Can you recommend a tent for my trip?", "assistant"),
        ("Which tent is the lightest?", None),
        ("In our last chat about tents, which one did I like?", None),
        ("Can you remind me of the tent we discussed for my trip?", None),
        ("我们之前聊过的那顶帐篷叫什么？", None),
    ],
)
def test_the_question_says_whose_turns_answer_it(query: str, behind: str | None) -> None:
    assert RoleRule.build(query, CHAT).behind == behind


def test_only_a_chat_with_an_assistant_has_roles() -> None:
    assert RoleRule.build("Which tent did I buy?", ("Ada", "Ben")).behind is None
    assert RoleRule.build("Which tent did I buy?", ("assistant",)).behind is None
    assert RoleRule.build("Which tent did I buy?", ("Ada", "Assistant")).behind == "assistant"
    assert is_assistant(" AI ") and not is_assistant("Aida") and not is_assistant(None)


def test_the_penalty_goes_to_the_other_role_and_follows_the_config() -> None:
    mine = RoleRule.build("Which tent did I buy?", CHAT)
    said = RoleRule.build("Which tent did you recommend?", CHAT)
    assert mine.adjustment("assistant", ON) == pytest.approx(0.05)
    assert mine.adjustment("user", ON) == 0.0
    assert said.adjustment("user", ON) == pytest.approx(0.05)
    assert said.adjustment("assistant", ON) == 0.0
    assert mine.adjustment("assistant", RecallConfig(role_penalty=0.0)) == 0.0
    assert mine.adjustment(None, ON) == 0.0


def _chat_units(config: RecallConfig, query: str, two_documents: bool = False) -> list[str]:
    """Three points of one episode: two pieces of one long assistant turn (the nearest) and the
    user's own statement; the units' order as highly_related ranks them. ``two_documents``: the
    two pieces come from two documents under the same chunk key (two turns, then)."""
    g = G()
    g.node("Ep", "Episode")
    g.node("f", "Facet")
    g.edge("Ep", "has_facet", "f")
    turns = {
        "a1": ("assistant: Here are some tents for the coast: a dome tent …", "assistant", "S1:1"),
        "a2": ("assistant: … and a tunnel tent that stands up to wind.", "assistant", "S1:1"),
        "u0": ("user: I bought the blue tunnel tent last week.", "user", "S1:0"),
    }
    dist = {"a1": 0.20, "a2": 0.21, "u0": 0.23}
    for name, (text, speaker, key) in turns.items():
        row = [key, f"doc-{name}" if two_documents else "doc", None, None]
        g.node(name, "FacetPoint", search_text=text, speaker=speaker, sources=[row])
        g.edge("f", "has_point", name)
    col = "FacetPoint_search_text"
    hits = [
        Hit(collection=col, node_id=nid(n), text=t[0], distance=dist[n]) for n, t in turns.items()
    ]
    scored = score_hits(hits, None, config)
    index = RelationshipIndex.build(g.sub())
    bundles = [Bundle(episode_id=nid("Ep"), score=0.0, best_path="point")]
    units = evidence_units(bundles, index, scored.evidence(g.sub(), query, config), config)
    names = {nid(n): n for n in turns}
    return [names[u.node_id] for u in units]


def test_roles_and_repeated_turns_reorder_the_units() -> None:
    off = RecallConfig(role_penalty=0.0, repeat_turn_penalty=0.0)
    query = "Which tent did I buy?"
    assert _chat_units(off, query) == ["a1", "a2", "u0"]
    # The second piece of turn S1:1 goes behind the user's turn …
    assert _chat_units(RecallConfig(role_penalty=0.0, repeat_turn_penalty=0.05), query) == [
        "a1",
        "u0",
        "a2",
    ]
    # … and a question about the asker puts the user's own statement first.
    assert _chat_units(ON, query) == ["u0", "a1", "a2"]
    # A question about what the assistant said keeps the assistant's turns ahead.
    assert _chat_units(ON, "Which tent did you recommend?")[0] == "a1"


def test_one_chunk_key_in_two_documents_is_two_turns() -> None:
    config = RecallConfig(role_penalty=0.0, repeat_turn_penalty=0.05)
    query = "Which tent did I buy?"
    assert _chat_units(config, query) == ["a1", "u0", "a2"]
    assert _chat_units(config, query, two_documents=True) == ["a1", "a2", "u0"]


def test_a_repeated_turn_moves_back_but_is_never_cut_for_it() -> None:
    # The second piece of turn S1:1 is within the relevance cutoff of the best unit by its own
    # score; moved back past the cutoff, it is still shown (after the other turn).
    tight = RecallConfig(role_penalty=0.0, repeat_turn_penalty=0.2, relevance_cutoff=0.05)
    assert _chat_units(tight, "Which tent did I buy?") == ["a1", "u0", "a2"]
