"""Why the ``vector`` mode is weak on the frozen bilingual set (issue 29): the embedder's
language gap, measured on the **tune half only** (``benchmarks/bilingual.py``'s split; the test
half is never read).

Every stored text of the set's notes that the searches rank (FacetPoint sentences, facet titles
and facet windows) is read back with its embedding; each tune question is embedded as the
searches embed it (:func:`memflow.recall.preprocess.preprocess`'s vector query). A note's
distance is its nearest text's. Printed, per question language:

- **own-script rank 1**: the expected note is the nearest note of its own script (the embedder
  finds it among the notes of its language) / **rank 1**: the nearest of all notes;
- **pool without the other script**: questions whose ``3 x top_k`` nearest FacetPoints (the
  vector mode's pool at top_k 10) hold no text of the other script at all, and the median rank
  of the first one;
- note top-1 / top-3 (FacetPoints only, as the vector mode ranks; and all texts) when the
  distances are **raw**; **shifted** per script (each script's distances less the mean of its
  best ``language_shift_top``: :func:`memflow.recall.bonus.language_shifts` on notes); and with
  the query **moved across the gap**: ``q - a (m_own - m_other)``, ``m`` the mean embedding of
  each script's stored FacetPoints, ``a`` 0.5 (half way) and 1.

``--distractors N``: the first N dialog turns of LoCoMo (``../shared/data/locomo10.json``,
English) are embedded as passages and added to the FacetPoints (in memory only, never stored): a
store grown in one language. Printed: per question language, the questions whose expected note
still has a FacetPoint among the first ``wide_search_top_k`` (the episodic mode's recall per
collection), with the raw query and with the query moved half way (the means over the grown
store).

    .venv/bin/python -m benchmarks.bilingual_vectors --home /tmp/bil-home --distractors 1000 \\
        --turns ../shared/data/locomo10.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
import psycopg

from benchmarks import bilingual, common
from memflow.config import libpq_url
from memflow.memory import Memory
from memflow.recall.config import RecallConfig
from memflow.recall.preprocess import is_cjk_text, preprocess

POINTS = "facetpoint_search_text"
TABLES = (POINTS, "facet_search_text", "facet_anchor_text")
# the stored texts with the document they came from (a text of several chunks: each source)
_TEXTS = """
SELECT t.text, t.embedding::text, d.source
  FROM memflow.{table} t
  JOIN memflow.node_chunk nc ON nc.dataset_id = t.dataset_id AND nc.node_id = t.node_id
  JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
  JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
 WHERE t.dataset_id = %(d)s
"""
_CJK = re.compile(r"[\u4e00-\u9fff]")


def stored_texts(url: str, dataset_id: Any) -> dict[str, list[tuple[str, str, np.ndarray]]]:
    """table -> [(text, note name, unit embedding)]."""
    out: dict[str, list[tuple[str, str, np.ndarray]]] = {}
    with psycopg.connect(libpq_url(url)) as conn:
        for table in TABLES:
            rows = conn.execute(_TEXTS.format(table=table), {"d": dataset_id}).fetchall()
            out[table] = [
                (text, Path(src).name, _unit(np.array(json.loads(vec)))) for text, vec, src in rows
            ]
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n else v


def note_distances(
    qvec: np.ndarray, texts: Sequence[tuple[str, str, np.ndarray]]
) -> dict[str, float]:
    """Each note's nearest text (cosine distance)."""
    best: dict[str, float] = {}
    for _, note, vec in texts:
        d = 1.0 - float(vec @ qvec)
        best[note] = min(best.get(note, 2.0), d)
    return best


def shifted(best: dict[str, float], script: dict[str, bool], top: int) -> dict[str, float]:
    """Each note's distance less the mean of its own script's ``top`` nearest notes."""
    out: dict[str, float] = {}
    for cjk in (True, False):
        mine = sorted(d for n, d in best.items() if script[n] == cjk)
        if not mine:
            continue
        base = sum(mine[:top]) / len(mine[:top])
        out.update({n: d - base for n, d in best.items() if script[n] == cjk})
    return out


def rank_of(expect: str, scores: dict[str, float], among: set[str] | None = None) -> int | None:
    order = sorted((n for n in scores if among is None or n in among), key=scores.__getitem__)
    return order.index(expect) + 1 if expect in order else None


def first_other(
    qvec: np.ndarray, points: Sequence[tuple[str, str, np.ndarray]], own_cjk: bool
) -> int:
    """The rank of the nearest FacetPoint of the other script than the question's."""
    order = sorted(points, key=lambda p: -float(p[2] @ qvec))
    return next((i for i, p in enumerate(order, 1) if bool(_CJK.search(p[0])) != own_cjk), 0)


def measure(
    texts: dict[str, list[tuple[str, str, np.ndarray]]],
    notes: dict[str, str],
    questions: Sequence[dict[str, Any]],
    qvecs: Sequence[np.ndarray],
    top: int,
) -> dict[str, Any]:
    """The figures of the module docstring, per question language ("all", "en", "zh")."""
    script = {n: is_cjk_text(body) for n, body in notes.items()}
    points = texts[POINTS]
    everything = [t for table in TABLES for t in texts[table]]
    means = {
        cjk: np.mean([v for text, _, v in points if bool(_CJK.search(text)) == cjk], axis=0)
        for cjk in (True, False)
    }
    pool = 3 * bilingual.TOP_K
    rows: list[dict[str, Any]] = []
    for q, qvec in zip(questions, qvecs, strict=True):
        own = is_cjk_text(q["question"])
        row: dict[str, Any] = {"lang": q["lang"]}
        for scope, pool_texts in (("points", points), ("all texts", everything)):
            best = note_distances(qvec, pool_texts)
            same = {n for n in best if script[n] == script[q["expect"]]}
            row[f"{scope}/own-script rank"] = rank_of(q["expect"], best, same)
            row[f"{scope}/raw"] = rank_of(q["expect"], best)
            row[f"{scope}/shifted"] = rank_of(q["expect"], shifted(best, script, top))
            for a in (0.5, 1.0):
                moved = _unit(qvec - a * (means[own] - means[not own]))
                row[f"{scope}/moved {a}"] = rank_of(q["expect"], note_distances(moved, pool_texts))
        row["first other"] = first_other(qvec, points, own)
        row["no other in pool"] = row["first other"] > pool
        rows.append(row)
    out: dict[str, Any] = {"pool": pool, "questions": len(rows)}
    keys = [k for k in rows[0] if "/" in k] if rows else []
    for lang in ("all", "en", "zh"):
        mine = [r for r in rows if lang in ("all", r["lang"])]
        cell: dict[str, Any] = {"n": len(mine)}
        for key in keys:
            ranks = [r[key] for r in mine]
            cell[key] = {
                "top1": sum(1 for k in ranks if k == 1),
                "top3": sum(1 for k in ranks if k is not None and k <= 3),
            }
        cell["no other in pool"] = sum(1 for r in mine if r["no other in pool"])
        cell["first other median"] = median(r["first other"] for r in mine) if mine else None
        out[lang] = cell
    return out


def distractor_turns(n: int, path: Path) -> list[str]:
    """The first ``n`` dialog turns of the LoCoMo conversations (``path``), in order."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for conv in raw:
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                out += [t["text"] for t in session if t.get("text")]
    return out[:n]


def kept_in_pool(
    points: Sequence[tuple[str, str, np.ndarray]],
    extra: np.ndarray,
    questions: Sequence[dict[str, Any]],
    qvecs: Sequence[np.ndarray],
    k: int,
    move: float,
) -> dict[str, list[int]]:
    """Per question language: [questions whose expected note has a point among the ``k``
    nearest of ``points`` plus the ``extra`` (other-note, non-CJK) vectors, questions]; the
    query moved by ``move`` times the gap between the scripts' means."""
    base = np.stack([v for _, _, v in points])
    vecs = np.vstack([base, extra]) if len(extra) else base
    cjk = np.array([bool(_CJK.search(t)) for t, _, _ in points] + [False] * len(extra))
    means = {True: vecs[cjk].mean(axis=0), False: vecs[~cjk].mean(axis=0)}
    out = {lang: [0, 0] for lang in ("all", "en", "zh")}
    for q, qvec in zip(questions, qvecs, strict=True):
        own = is_cjk_text(q["question"])
        moved = _unit(qvec - move * (means[own] - means[not own]))
        nearest = set(np.argsort(1.0 - vecs @ moved)[:k].tolist())
        found = any(i in nearest for i, (_, note, _) in enumerate(points) if note == q["expect"])
        for lang in ("all", q["lang"]):
            out[lang][0] += found
            out[lang][1] += 1
    return out


def markdown(res: dict[str, Any]) -> str:
    keys = [k for k in res["all"] if "/" in k]
    header = ["asked in", "n", *keys, "no other script in pool", "first other (median)"]
    rows = [
        [
            lang,
            res[lang]["n"],
            *(f"{res[lang][k]['top1']} / {res[lang][k]['top3']}" for k in keys),
            res[lang]["no other in pool"],
            res[lang]["first other median"],
        ]
        for lang in ("all", "en", "zh")
    ]
    text = (
        f"Bilingual tune half, {res['questions']} questions: expected note top-1 / top-3 counts; "
        f"pool = the {res['pool']} nearest FacetPoints.\n\n" + common.md_table(header, rows)
    )
    if "kept" in res:
        kept = res["kept"]
        text += (
            f"\n\nWith {kept['distractors']} English dialog turns added: questions whose "
            f"expected note has a FacetPoint among the first {kept['k']}.\n\n"
            + common.md_table(
                ["asked in", "raw query", "query moved 0.5"],
                [
                    [lang, *(f"{c[0]} / {c[1]}" for c in (kept["raw"][lang], kept["moved"][lang]))]
                    for lang in ("all", "en", "zh")
                ],
            )
        )
    return text


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--embedder", default="local", help="embedder spec (local, hash, ...)")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument(
        "--distractors", type=int, default=0, help="English dialog turns added (see above)"
    )
    ap.add_argument(
        "--turns", type=Path, default=common.shared_data("locomo10.json"), help="LoCoMo json"
    )
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    embedder = make_embedder(args.embedder)
    data = bilingual.load()
    halves = bilingual.half_of(data["queries"])
    tune = [q for q in data["queries"] if halves[q["id"]] == "tune"]  # never the test half
    notes = {Path(d["name"]).name: d["content"] for d in data["documents"]}
    admin = common.server_url(args.database_url, args.home)
    with (
        common.scratch_database(admin, "bilvec") as url,
        Memory.open(url, embedder=embedder) as mem,
    ):
        ds = mem.dataset("bilingual")
        bilingual.memorise(ds, data["documents"])
        texts = stored_texts(url, ds.id)
    qvecs = [
        _unit(np.asarray(embedder.embed_query(preprocess(q["question"]).vector_query)))
        for q in tune
    ]
    cfg = RecallConfig()
    res = measure(texts, notes, tune, qvecs, cfg.language_shift_top)
    if args.distractors:
        turns = distractor_turns(args.distractors, args.turns)
        extra = np.asarray(embedder.embed_passages(turns), dtype=float)
        extra /= np.linalg.norm(extra, axis=1, keepdims=True)
        k = cfg.wide_search_top_k
        res["kept"] = {
            "distractors": len(turns),
            "k": k,
            **{
                name: kept_in_pool(texts[POINTS], extra, tune, qvecs, k, move)
                for name, move in (("raw", 0.0), ("moved", 0.5))
            },
        }
    print(markdown(res))
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
