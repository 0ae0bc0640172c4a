"""docs/benchmarks/longmemeval.md from a result of benchmarks/longmemeval.py (all of it: the prose
is generated too, so the file only ever changes through the script)."""

from __future__ import annotations

from typing import Any

from benchmarks import common

_COLS = (
    ("evidence_recall@500", "ev@500"),
    ("evidence_recall@1000", "ev@1000"),
    ("evidence_recall@2000", "ev@2000"),
    ("session_recall@5", "session@5"),
    ("episode_recall@1", "ep@1"),
    ("episode_recall@5", "ep@5"),
    ("episode_coverage@5", "cov@5"),
    ("episode_coverage@10", "cov@10"),
)
_SHORT = {
    "single-session-user": "ss-user",
    "single-session-assistant": "ss-assistant",
    "single-session-preference": "ss-preference",
    "multi-session": "multi-session",
    "knowledge-update": "knowledge-update",
    "temporal-reasoning": "temporal",
}

_METHOD = """\
LongMemEval_S (Wu et al., 2024): long user-assistant chat histories, one question each, with the
sessions and turns that hold the answer labelled (`answer_session_ids`, `has_answer`). Retrieval
only, no LLM: does the context memflow packs for the question hold the labelled turns?

- **Data**: the per-question files (`<haystack sessions>_<question_id>.json`; a public copy is in
  the GitHub repository hussainzs/Memoria, `evaluations/data/lme_jsons/`, the S split being the
  files numbered 38–58) kept outside the repository (`../shared/data/longmemeval_s/`, else
  `~/.cache/memflow-lme-data/longmemeval_s/`; the run's folder is in the settings below), only
  those numbered 43 or more; abstention items (`_abs`) are left out of the slice (they have no
  evidence to recall).
- **Split**: tune when the integer value of sha256(question_id) is even, else test. Constants are
  chosen on tune only.
- **Slice**: per half, the items in sha256(question_id) order, the first `per_type` of each of
  the six question types (stratified, deterministic, picked by nobody); a smaller `per_type` is
  a subset of a larger one. Size set by the ingest time available (an uncached item costs
  ~2–3 CPU minutes, mostly embedding; the table below has the measured figures).
- **Ingest** (benchmarks/lme_store.py): one dataset per item; each haystack session is one
  conversation document (`started_at` = its haystack date, speakers `user` and `assistant`), in
  time order, memorised with the rules extractor and memflow's defaults (a dialog session is one
  episode; no routing). One document per session rather than per item: a chat application stores
  a session when it ends, the episodes are the same (one per session either way), a failed ingest
  resumes at the session it stopped at, and the supersession rules see the sessions in time order.
  Turn keys are `S<session>:<turn>`; the haystack session ids (which name the answer sessions) are
  never stored.
- **Evidence**: turns with `has_answer` are the evidence turns; the `answer_session_ids` the
  answer sessions.
- **Search**: each system searches once per question with `now` = the question's date, display
  `highly_related`, an unlimited budget; each budget is packed from its ranked units with the
  library's packing rule (`memflow.recall.render.pack_indexes`), as in benchmarks/locomo.py.
- **Metrics**: ev@B = share of the evidence turns that a unit packed into B tokens cites
  (provenance); session@5 = an answer session among the sessions cited by the top 5 results;
  ep@k = an episode of an answer session among the top k episodes (for the flat baselines: the
  episodes of their ranked units); cov@k = the share of the answer sessions whose episode is in
  the top k (LoCoMo's episode recall; below 1 when a question needs several sessions); p50 =
  search milliseconds with the query vector cached (its embedding excluded).
- **Facts that change** (issue 26; knowledge-update and temporal-reasoning items whose evidence
  lies in two answer sessions with different dates): *latest first* = an evidence turn of the
  latest answer session is in the 500-token context and comes before every evidence turn of an
  older answer session (context order: rank order for the baselines, episode groups for
  episodic). *As-of* (knowledge-update only): the same question searched with `as_of` = `now` =
  the midpoint between the two latest answer sessions' dates; *as-of first* = an older answer
  session's evidence turn is in the 500-token context before any of the latest session's;
  *later hidden* = none of the latest session's evidence turns is in it."""


def _commands(res: dict[str, Any]) -> str:
    per = res["stamp"]["settings"]["per_type"]
    flag = "" if per == 1 else f" --per-type {per}"
    return f"""\
    # this table: ingest what the store lacks (nice: the machine is shared), then search
    nice -n 10 .venv/bin/python -m benchmarks.longmemeval{flag}
    # search-only on the kept store (minutes), e.g. from another branch:
    .venv/bin/python -m benchmarks.longmemeval{flag} --search-only --name longmemeval-mine
    # after a change to the write path: re-ingest (embeddings come from the cache)
    nice -n 10 .venv/bin/python -m benchmarks.longmemeval{flag} --fresh
    # smoke test on a synthetic folder (what CI runs)
    .venv/bin/python -m benchmarks.longmemeval --quick --out /tmp/lme-quick

The store (`<home>/store`, an embedded PostgreSQL), the embedding cache (`<home>/embeddings.sqlite`,
keyed by model, kind and text) and the ingest log (`<home>/ingest-log.jsonl`) live under `--home`
(default `~/.cache/memflow-lme`). Every stored session document records the commit and a hash of
the library code that wrote it: an ingest refuses a store written by other code (`--fresh`
re-ingests, `--search-only` searches it as it is and the result names its writer). A branch that
adds a migration: copy the store first (`cp -a ~/.cache/memflow-lme /tmp/lme-copy` while no run
uses it), then `--home /tmp/lme-copy --upgrade-store`."""


def _table(block: dict[str, dict[str, Any]]) -> str:
    head = ["system", *(s for _, s in _COLS), "p50 ms", "questions"]
    rows = [
        [name, *(_fmt(r.get(c)) for c, _ in _COLS), _fmt(r["p50_ms_no_embed"]), r["questions"]]
        for name, r in block.items()
    ]
    return common.md_table(head, rows)


def _fmt(v: Any) -> Any:
    return "—" if v is None else v


def _by_type(split: dict[str, dict[str, dict[str, Any]]]) -> str:
    head = ["type", "system", "ev@500", "ev@2000", "session@5", "ep@1", "ep@5", "cov@10", "n"]
    rows = []
    for g, by_sys in split.items():
        if g == "all":
            continue
        for name, r in by_sys.items():
            rows.append(
                [
                    _SHORT.get(g, g),
                    name,
                    _fmt(r["evidence_recall@500"]),
                    _fmt(r["evidence_recall@2000"]),
                    _fmt(r["session_recall@5"]),
                    _fmt(r["episode_recall@1"]),
                    _fmt(r["episode_recall@5"]),
                    _fmt(r.get("episode_coverage@10")),
                    r["questions"],
                ]
            )
    return common.md_table(head, rows)


def _updates(splits: dict[str, Any]) -> str:
    head = ["half", "questions", "system", "latest first", "n", "as-of first", "later hidden",
            "n (as-of)"]  # fmt: skip
    rows = []
    for split in ("test", "tune", "both"):
        for group in ("all", "knowledge-update", "temporal-reasoning"):
            for name, r in splits.get(split, {}).get(group, {}).items():
                if not r.get("latest_first_questions") or (split == "both" and group != "all"):
                    continue
                rows.append([
                    split, "both types" if group == "all" else _SHORT[group], name,
                    _fmt(r.get("latest_first")), r.get("latest_first_questions", 0),
                    _fmt(r.get("as_of_first")), _fmt(r.get("as_of_later_hidden")),
                    r.get("as_of_questions", 0),
                ])  # fmt: skip
    return common.md_table(head, rows)


_ITEM_KEYS = (
    "evidence_recall@500",
    "evidence_recall@2000",
    "episode_recall@1",
    "episode_recall@5",
)


def _cell(row: dict[str, Any]) -> str:
    return " / ".join("—" if row.get(k) is None else f"{row[k]:.2g}" for k in _ITEM_KEYS)


def _differing(res: dict[str, Any]) -> str:
    """The items on which the systems do not all score the same (ids only, never data)."""
    names = list(res["systems"])
    rows = []
    for rec in res["items"]:
        cells = [_cell(rec[n]) for n in names if n in rec]
        if len(set(cells)) > 1:
            rows.append([rec["question_id"], rec["split"], _SHORT.get(rec["question_type"], ""),
                         *cells])  # fmt: skip
    if not rows:
        return "Every system scores the same on every item."
    return (
        "Each cell: ev@500 / ev@2000 / ep@1 / ep@5 of the item's one question.\n\n"
        + common.md_table(["item", "half", "type", *names], rows)
    )


def _ingest(store: dict[str, Any]) -> str:
    recs = store.get("ingested_this_run") or store.get("logged") or []
    if not recs:
        return "No ingest record for these items (the store was built elsewhere)."
    head = [
        "item",
        "sessions",
        "words",
        "wall s",
        "CPU s",
        "texts embedded",
        "cache hits",
        "episodes",
        "points",
        "load",
    ]
    rows = [
        [
            r["question_id"],
            r["sessions"],
            r["words"],
            r["wall_s"],
            r["cpu_s"],
            r["texts_embedded"],
            r["cache_hits"],
            r["episodes"],
            r["facet_points"],
            r.get("load_avg_1", ""),
        ]
        for r in recs
    ]
    cpu = sum(r["cpu_s"] for r in recs)
    server = sum(r.get("server_cpu_s") or 0.0 for r in recs)
    wall = sum(r["wall_s"] for r in recs)
    words = sum(r["words"] for r in recs)
    return (
        common.md_table(head, rows)
        + f"\n\nTotal: {len(recs)} items, {words:,} words, wall {wall / 3600:.2f} h, CPU "
        f"{(cpu + server) / 3600:.2f} h (the benchmark process {cpu / 3600:.2f} h, the embedded "
        f"PostgreSQL server {server / 3600:.2f} h)."
    )


def markdown(res: dict[str, Any]) -> str:
    splits = res["splits"]
    store = res["store"]
    settings = res["stamp"]["settings"]
    n = {k: len(v) for k, v in res["slice"].items()}
    per = settings["per_type"]
    parts = [
        "# LongMemEval_S retrieval quality",
        "",
        f"Slice: {n.get('tune', 0)} tune and {n.get('test', 0)} test items "
        f"({per} per question type and half). Written by "
        "`benchmarks/longmemeval.py`; do not edit by hand.",
        "",
        f"**Small sample.** Each figure per question type and half rests on {per} question(s): "
        f"one question moves it by {1 / per:.2f}; a half's overall figure rests on "
        f"{6 * per} questions (one question = {1 / (6 * per):.3f}). Read differences below that "
        "as ties.",
        "",
        _METHOD,
        "",
        "## Commands",
        "",
        _commands(res),
    ]
    for split in ("test", "tune"):
        if split in splits:
            parts += [
                "",
                f"## {split.capitalize()} half",
                "",
                _table(splits[split]["all"]),
                "",
                _by_type(splits[split]),
            ]
    if "both" in splits:
        parts += ["", "## Both halves", "", _table(splits["both"]["all"])]
    parts += ["", "## Facts that change (issue 26)", "", _updates(splits)]
    parts += ["", "## Items where the systems differ", "", _differing(res)]
    written = ", ".join(f"`{w['commit'][:12]}` (code {w['code']})" for w in store["written_by"])
    parts += [
        "",
        "## Store and ingest",
        "",
        f"Store: `{settings['store']}`, written by {written}; this run's tree: "
        f"`{store['this_tree']['commit'][:12]}` (code {store['this_tree']['code']}). "
        f"Search-only: {settings['search_only']}.",
        "",
        _ingest(store),
        "",
        "Datasets:",
        "",
        common.md_table(
            ["item", "episodes", "facet points", "entities", "edges", "embeddings"],
            [
                [
                    q,
                    s["episodes"],
                    s["facet_points"],
                    s["entities"],
                    s["edges"],
                    s.get("embeddings", "—"),
                ]
                for q, s in res["datasets"].items()
            ],
        ),
    ]
    if res.get("notes"):
        parts += ["", "## Notes", "", *[f"- {note}" for note in res["notes"]]]
    parts += ["", "## Run", "", common.stamp_markdown(res["stamp"])]
    return "\n".join(parts)
