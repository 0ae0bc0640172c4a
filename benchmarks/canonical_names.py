"""Would an ``Entity_canonical_name`` collection (seed 000's seventh) change which entities a query
reaches? Offline, with the default embedder, no store: the entity names the rules extractor finds
in each LoCoMo conversation (the test half) and in an invented mixed-language set, embedded as
written (``Entity_name``) and canonicalised (NFKC, casefolded, punctuation removed).

For every question: the 5 entities nearest by name alone ("without") and by the better of name
and canonical name ("with": what a seventh collection adds, each node keeping its best hit), and
whether they include (and put first) an entity the question's evidence turns mention (other than
the two speakers).

    python -m benchmarks.canonical_names [--out DIR]

Writes ``canonical-names.json`` and its page ``canonical-names.md`` (:func:`markdown`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common
from benchmarks.locomo import DATA, load, split_of
from memflow.embed.local import LocalEmbedder
from memflow.ids import canonical_name
from memflow.ingest.entities import find_mentions

TOP = 5
NAME = "canonical-names"
# Invented: names written with case, width, punctuation and script variants, and questions that
# write them another way. (name in the store, question, the entity the question is about)
MIXED = [
    ("O'Brien-Lopez", "what did obrien lopez decide?", "O'Brien-Lopez"),
    ("ＡＣＭＥ Retail", "when does ACME RETAIL renew?", "ＡＣＭＥ Retail"),
    ("Café Müller", "who runs the cafe muller?", "Café Müller"),
    ("J.R. Okafor", "what did JR Okafor say about the budget?", "J.R. Okafor"),
    ("李雷", "李 雷的导师是谁？", "李雷"),
    ("ＧｒｅｅｎＰａｙ", "greenpay 的合同什么时候续签？", "ＧｒｅｅｎＰａｙ"),
    ("蓝鲸科技（上海）", "蓝鲸科技上海的付款", "蓝鲸科技（上海）"),
    ("Hengyuan-Logistics", "hengyuan logistics shipped late", "Hengyuan-Logistics"),
    ("São Paulo office", "the sao paulo office lease", "São Paulo office"),
    ("DataPipe v2", "when did datapipe V2 launch?", "DataPipe v2"),
    ("Nadia Al-Sayed", "nadia al sayed's trip", "Nadia Al-Sayed"),
    ("韩梅梅", "韩梅梅 去哪了", "韩梅梅"),
]
MIXED_DISTRACTORS = [
    "Tomasz", "Norbright Metals", "Lakeview Foods", "Farid", "小王", "小李", "供应商付款",
    "Acme Logistics", "Café Central", "Okafor Group", "Logistics team", "Paulo Costa",
]  # fmt: skip


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def _rank(q: np.ndarray, names: np.ndarray, canon: np.ndarray | None) -> list[int]:
    d = 1.0 - names @ q
    if canon is not None:
        d = np.minimum(d, 1.0 - canon @ q)
    return [int(i) for i in np.argsort(d, kind="stable")[:TOP]]


def evaluate(
    embedder: LocalEmbedder, groups: list[tuple[list[str], list[tuple[str, set[str]]]]]
) -> dict[str, Any]:
    """``groups``: (entity names of one dataset, its questions with the names they are about)."""
    pairs: list[float] = []
    entities = differs = changed = count = 0
    hits = {"without": 0, "with": 0, "without@1": 0, "with@1": 0}
    for names, questions in groups:
        canon_texts = [canonical_name(n) or n for n in names]
        differ = [i for i, (n, c) in enumerate(zip(names, canon_texts, strict=True)) if n != c]
        vn = _unit(np.asarray(embedder.embed_passages(names), dtype=np.float32))
        vc = _unit(np.asarray(embedder.embed_passages(canon_texts), dtype=np.float32))
        pairs += [float(x) for x in (1.0 - np.sum(vn * vc, axis=1))[differ]]
        entities, differs, count = (
            entities + len(names),
            differs + len(differ),
            count + len(questions),
        )
        for text, wanted in questions:
            q = np.asarray(embedder.embed_query(text), dtype=np.float32)
            q = q / max(float(np.linalg.norm(q)), 1e-12)
            without, with_ = _rank(q, vn, None), _rank(q, vn, vc)
            changed += set(without) != set(with_)
            hits["without"] += any(names[i] in wanted for i in without)
            hits["with"] += any(names[i] in wanted for i in with_)
            hits["without@1"] += names[without[0]] in wanted
            hits["with@1"] += names[with_[0]] in wanted
    n = count or 1
    return {
        "entities": entities,
        "canonical_differs": differs,
        "name_to_canonical_distance_mean": round(float(np.mean(pairs)), 4) if pairs else 0.0,
        "name_to_canonical_distance_p95": round(float(np.percentile(pairs, 95)), 4)
        if pairs
        else 0.0,
        "questions": count,
        "top5_changed": changed,
        f"evidence_entity_in_top{TOP}_without": round(hits["without"] / n, 4),
        f"evidence_entity_in_top{TOP}_with": round(hits["with"] / n, 4),
        "evidence_entity_first_without": round(hits["without@1"] / n, 4),
        "evidence_entity_first_with": round(hits["with@1"] / n, 4),
    }


def _locomo(embedder: LocalEmbedder, data: Path) -> dict[str, Any]:
    convs, _ = load(data)
    groups: list[tuple[list[str], list[tuple[str, set[str]]]]] = []
    for conv in convs:
        if split_of(conv) != "test":
            continue
        texts = conv.turn_texts()
        mentions = {k: {s for s, _ in find_mentions(t)} for k, t in texts.items()}
        speakers = {t["speaker"] for _, _, turns in conv.sessions for t in turns}
        names = sorted(set().union(*mentions.values()) | speakers)
        questions: list[tuple[str, set[str]]] = []
        for qn in conv.questions:
            # The names mentioned in the evidence turns, the two speakers left out (they are in
            # nearly every evidence and would make every ranking look right).
            wanted = set().union(*(mentions.get(k, set()) for k in qn.evidence)) - speakers
            if wanted:
                questions.append((qn.text, wanted))
        groups.append((names, questions))  # one dataset per conversation, as benchmarks/locomo
    return evaluate(embedder, groups)


def markdown(res: dict[str, Any]) -> str:
    st = res["stamp"]
    top = st["settings"]["top"]

    def row(label: str, r: dict[str, Any]) -> list[Any]:
        return [
            label, r["entities"], r["questions"], r["top5_changed"],
            f"{r[f'evidence_entity_in_top{top}_without']} → {r[f'evidence_entity_in_top{top}_with']}",
            f"{r['evidence_entity_first_without']} → {r['evidence_entity_first_with']}",
            f"{r['name_to_canonical_distance_mean']} / {r['name_to_canonical_distance_p95']}",
        ]  # fmt: skip

    loc, mixed = res["locomo_test_half"], res["mixed"]
    table = common.md_table(
        ["set", "entities", "questions", f"top-{top} changed",
         f"evidence entity in top {top}: without → with", "first: without → with",
         "name ↔ canonical distance mean / p95"],
        [row("LoCoMo test half (per conversation; evidence names other than the speakers)", loc),
         row("invented mixed-language set (case, width, punctuation, accents, CJK spacing)",
             mixed)],
    )  # fmt: skip
    return "\n".join(
        [
            "# `Entity_canonical_name` (seed 000's seventh collection): measured, left out",
            "",
            f"Produced by `{st.get('command') or 'python -m benchmarks.canonical_names'}` "
            "(`benchmarks/canonical_names.py`; offline, no store, embedder "
            f"`{st['settings']['embedder']}`). The entity names the rules extractor finds, "
            "embedded as written (`Entity_name`) and canonicalised (NFKC, casefolded, punctuation "
            f'removed). "With" ranks each entity by the better of the two (what a seventh '
            f"collection adds to recall); per question, the {top} nearest entities.",
            "",
            table,
            "",
            (
                "On LoCoMo's test half the canonical names do not bring the evidence entities "
                "into the top more often: the collection stays out. "
                if loc[f"evidence_entity_in_top{top}_with"]
                <= loc[f"evidence_entity_in_top{top}_without"]
                else "On LoCoMo's test half the canonical names bring the evidence entities into "
                "the top more often: the collection's cost should be weighed again. "
            )
            + "Exact canonical matching stays where it helps: one Entity per canonical name "
            "(`node_entity_canonical_idx`). "
            "This is an entity-level proxy, not an end-to-end LoCoMo replay.",
            "",
            "## Run",
            "",
            common.stamp_markdown(st),
        ]
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT, help="folder for the results")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite canonical-names.md from canonical-names.json",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, NAME, [], markdown)
    embedder = LocalEmbedder()
    mixed_names = [n for n, _, _ in MIXED] + MIXED_DISTRACTORS
    res = {
        "stamp": common.stamp({"top": TOP, "embedder": embedder.name}, __file__, argv),
        "mixed": evaluate(embedder, [(mixed_names, [(q, {e}) for _, q, e in MIXED])]),
        "locomo_test_half": _locomo(embedder, args.data),
    }
    common.write_json(args.out / f"{NAME}.json", res)
    common.write_text(args.out / f"{NAME}.md", markdown(res))
    print(markdown(res))
    return res


if __name__ == "__main__":
    main()
