"""The packing rule (memflow.recall.render.pack_indexes): within budget, and monotonic."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memflow.recall.config import RecallConfig
from memflow.recall.render import budget_ladder, pack_indexes

PACK_LADDER_FLOOR = RecallConfig().pack_ladder_floor

# (group, tokens, header tokens): a group's header is one text, so its tokens are the group's.
items_strategy = st.lists(st.tuples(st.integers(0, 6), st.integers(1, 400)), max_size=60).map(
    lambda pairs: [(g, t, g + 1) for g, t in pairs]
)


def _cost(items: list[tuple[int, int, int]], packed: list[int], shared: bool) -> int:
    opened: set[int] = set()
    total = 0
    for i in packed:
        group, tokens, header = items[i]
        total += tokens + (0 if shared and group in opened else header)
        opened.add(group)
    return total


@settings(max_examples=300, deadline=None)
@given(
    items=items_strategy,
    low=st.integers(1, 3000),
    extra=st.integers(0, 3000),
    shared=st.booleans(),
)
def test_packing_is_monotonic_and_within_budget(
    items: list[tuple[int, int, int]], low: int, extra: int, shared: bool
) -> None:
    high = low + extra
    small = pack_indexes(items, low, shared_headers=shared)
    large = pack_indexes(items, high, shared_headers=shared)
    assert set(small) <= set(large)
    assert small == sorted(small) and large == sorted(large)
    assert _cost(items, small, shared) <= low
    assert _cost(items, large, shared) <= high


def _greedy(items: list[tuple[int, int, int]], budget: int) -> list[int]:
    """The former rule: rank order, skip what does not fit."""
    used, out = 0, []
    for i, (_, tokens, header) in enumerate(items):
        if used + tokens + header <= budget:
            used += tokens + header
            out.append(i)
    return out


def test_plain_greedy_was_not_monotonic_and_the_rule_is() -> None:
    # Ranked: four turns of ~300 tokens, then a shorter evidence turn (120).
    items = [(0, 300, 1), (1, 290, 1), (2, 310, 1), (3, 300, 1), (4, 120, 1)]
    assert _greedy(items, 500) == [0, 4] and _greedy(items, 1000) == [0, 1, 2]  # 4 lost
    assert pack_indexes(items, 500) == [0, 4]
    assert pack_indexes(items, 1000) == [0, 1, 4]


def test_ladder_points_skip_what_does_not_fit_and_between_them_a_prefix_is_added() -> None:
    assert budget_ladder(1200) == [50, 100, 200, 500, 1000]
    assert budget_ladder(PACK_LADDER_FLOOR - 1) == []
    items = [(0, 30, 0), (1, 60, 0), (2, 10, 0), (3, 5, 0)]
    # Under the first point: the prefix that fits, stopping at the first that does not.
    assert pack_indexes(items, 45) == [0]
    # At 50: greedy, the 60-token unit is skipped for the shorter ones after it.
    assert pack_indexes(items, 50) == [0, 2, 3]
    # At 99 the prefix after the 50 set (unit 1, 60 tokens) does not fit; at 105 it does.
    assert pack_indexes(items, 99) == [0, 2, 3]
    assert pack_indexes(items, 105) == [0, 1, 2, 3]


def test_headers_are_paid_once_per_group_or_on_every_line() -> None:
    items = [(0, 10, 5), (0, 10, 5), (1, 10, 5)]
    assert pack_indexes(items, 50, shared_headers=True) == [0, 1, 2]  # 15 + 10 + 15
    assert pack_indexes(items, 44, shared_headers=False) == [0, 1]  # 15 + 15 (+15 = 45)


@settings(max_examples=300, deadline=None)
@given(
    items=items_strategy,
    cut=st.integers(0, 60),
    low=st.integers(1, 3000),
    extra=st.integers(0, 3000),
)
def test_fill_keeps_what_comes_first_and_stays_monotonic(
    items: list[tuple[int, int, int]], cut: int, low: int, extra: int
) -> None:
    cut = min(cut, len(items))
    high = low + extra
    small = pack_indexes(items, low, fill_from=cut)
    large = pack_indexes(items, high, fill_from=cut)
    assert set(small) <= set(large)
    for budget, packed in ((low, small), (high, large)):
        first = [i for i in packed if i < cut]
        # The items before ``fill_from`` are packed exactly as without the others.
        assert first == pack_indexes(items[:cut], budget)
        filled = [i for i in packed if i >= cut]
        assert not filled or len(first) == cut  # filling only once every earlier one is in
        # Fill groups pay their headers again (they are shown as groups of their own).
        assert _cost(items, first, True) + _cost(items, filled, True) <= budget


def test_fill_takes_the_room_left_and_only_that() -> None:
    items = [(0, 30, 5), (0, 20, 5), (1, 40, 5), (2, 300, 5)]
    assert pack_indexes(items, 1000) == [0, 1, 2, 3]
    # The first two cost 55: the fill gets the rest of a budget of 110 (40 + its header).
    assert pack_indexes(items, 110, fill_from=2) == [0, 1, 2]
    assert pack_indexes(items, 99, fill_from=2) == [0, 1]
    # Not every ranked item fits: nothing fills (the budget is the ranked items').
    assert pack_indexes(items, 50, fill_from=2) == [0]
    assert pack_indexes(items, 50, fill_from=len(items)) == pack_indexes(items, 50)
