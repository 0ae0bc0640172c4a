"""Synthetic check of the packing rule (memflow.recall.render.pack_indexes) against the former
greedy packing (rank order, skip what does not fit), at the LoCoMo budgets 200 / 500 / 1,000.

``python -m benchmarks.packing`` draws random rankings of 120 units (turn lengths lognormal around
20 tokens, one in ten a long 150-400-token unit; 15 episodes; 2-token headers paid once per
episode) and marks evidence units, more likely the better their rank (probability
``0.5 * decay**rank``). It prints the mean share of evidence packed at each budget by both rules
and how many rankings break monotonicity (a unit packed at 200 missing at 500, or at 500 missing
at 1,000). No database, no data set: the rule alone.
"""

from __future__ import annotations

import argparse
import random
import statistics

from memflow.recall.render import pack_indexes

BUDGETS = (200, 500, 1000)
Item = tuple[int, int, int]


def greedy(items: list[Item], budget: int) -> list[int]:
    """The former rule, kept here as the baseline."""
    used, opened, out = 0, set(), []
    for i, (group, tokens, header) in enumerate(items):
        cost = tokens + (0 if group in opened else header)
        if used + cost <= budget:
            used += cost
            opened.add(group)
            out.append(i)
    return out


def ranking(rng: random.Random, n: int = 120) -> list[Item]:
    items = []
    for _ in range(n):
        long = rng.random() < 0.1
        tokens = rng.randint(150, 400) if long else max(1, int(rng.lognormvariate(3.0, 0.6)))
        items.append((rng.randrange(15), tokens, 2))
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rankings", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rules = {"greedy (former)": greedy, "pack_indexes": pack_indexes}
    for decay in (0.93, 0.8):
        rng = random.Random(args.seed)
        share: dict[str, dict[int, list[float]]] = {r: {b: [] for b in BUDGETS} for r in rules}
        broken = dict.fromkeys(rules, 0)
        for _ in range(args.rankings):
            items = ranking(rng)
            evidence = {i for i in range(len(items)) if rng.random() < 0.5 * decay**i}
            if not evidence:
                continue
            for name, rule in rules.items():
                packed = {b: set(rule(items, b)) for b in BUDGETS}
                for b in BUDGETS:
                    share[name][b].append(len(evidence & packed[b]) / len(evidence))
                if not packed[200] <= packed[500] <= packed[1000]:
                    broken[name] += 1
        print(f"evidence probability 0.5 * {decay}**rank, {args.rankings} rankings")
        for name in rules:
            cells = "  ".join(
                f"@{b}: {100 * statistics.mean(share[name][b]):5.1f} %" for b in BUDGETS
            )
            print(f"  {name:16} {cells}  non-monotonic rankings: {broken[name]}")


if __name__ == "__main__":
    main()
