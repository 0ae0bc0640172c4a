"""Evidence recall on long turns, before and after (issue 19): LoCoMo-style, by provenance.

A generated advice chat (English and Chinese sessions, own templates, no dataset text) whose
assistant answers run 300 to 3,000 words; each answer hides one evidence sentence, a fact with
invented names and numbers, at its start, middle or end, and a question asks for that fact.
Each side (``--base-tree``: the base commit's worktree, "before"; this tree, "after") memorises
the chat in its own child process and scratch database with the same embedder, then searches
every question in the episodic and vector modes at 500 / 1,000 / 2,000 tokens
(``highly_related``, one search per budget: the context a user gets). A question's evidence is
recalled at a budget when a context unit of that search cites the evidence turn: its
``citations`` (document id and message key) where the tree has them, else its ``sources``
(message keys; the chat is the dataset's only document, so a key names the turn). Recall must
never fall as the budget grows: every question whose recall drops is reported.

Run: ``python -m benchmarks.longturns --base-tree /work/wt-old [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.ingest_long import (
    _EN_TOPICS,
    _EN_USER,
    _ZH_TOPICS,
    _ZH_USER,
    _fill,
    common_commit,
    run_in_tree,
    sentences_en,
    sentences_zh,
)

BUDGETS = (500, 1000, 2000)
MODES = ("episodic", "vector")
POSITIONS = ("start", "middle", "end")
# Answer lengths in words (Chinese: twice as many characters), cycled over the answers.
LENGTHS = (300, 3000, 450, 2200, 700, 1500, 1000)

_NAMES = ("Marisol", "Tobiah", "Quilla", "Oskar", "Yevgenia", "Dario", "Fenna", "Ignatius")
_OBJECTS = ("the garden shed", "the bike locker", "the attic hatch", "the side gate", "the van")
_COLORS = ("blue", "green", "yellow", "red", "white", "orange")
_DEVICES = ("dishwasher", "projector", "espresso machine", "lawn mower", "heat pump")
_TOOLS = ("ladder", "pressure washer", "tile cutter", "hedge trimmer", "soldering iron")
_MONTHS = ("March", "April", "June", "August", "October", "November")
_EN_FACTS = (
    (
        "By the way, the spare key for {obj} is hidden under the {color} flowerpot.",
        "Where is the spare key for {obj} hidden?",
    ),
    (
        "Also, the {tool} we borrowed from {name} has to go back before {month} {day}.",
        "When does the {tool} borrowed from {name} have to go back?",
    ),
    (
        "One more thing: the warranty on the {device} runs out in {month} {year}.",
        "When does the warranty on the {device} run out?",
    ),
    (
        "{name}'s birthday dinner is booked at the {color} Lantern restaurant for {n} people.",
        "Where is {name}'s birthday dinner booked?",
    ),
    (
        "Remember that the {tool} lives in the {color} crate behind {obj}.",
        "Where is the {tool} kept?",
    ),
)
_ZH_NAMES = ("林晓雯", "周子航", "陈嘉怡", "吴浩然", "郑雨桐")
_ZH_OBJECTS = ("花园小屋", "自行车柜", "阁楼门", "侧门")
_ZH_COLORS = ("蓝色", "绿色", "黄色", "红色")
_ZH_DEVICES = ("洗碗机", "投影仪", "咖啡机", "热水器")
_ZH_TOOLS = ("梯子", "高压水枪", "瓷砖切割机", "电烙铁")
_ZH_FACTS = (
    ("顺便说一下，{obj}的备用钥匙藏在那个{color}花盆下面。", "{obj}的备用钥匙藏在哪里？"),
    ("另外，从{name}那里借的{tool}要在{m}月{day}日之前还回去。", "从{name}那里借的{tool}什么时候要还？"),
    ("还有一件事：{device}的保修期到{year}年{m}月结束。", "{device}的保修什么时候到期？"),
    ("{name}的生日晚餐订在{color}灯笼餐厅，一共{n}个人。", "{name}的生日晚餐订在哪家餐厅？"),
)  # fmt: skip


def _fact(rng: random.Random, i: int, zh: bool, used: set[str]) -> tuple[str, str]:
    """An evidence sentence and its question (not in ``used``): template ``i``, slots drawn."""
    fact, question = (_ZH_FACTS if zh else _EN_FACTS)[i % len(_ZH_FACTS if zh else _EN_FACTS)]
    pools = (
        {"obj": _ZH_OBJECTS, "color": _ZH_COLORS, "device": _ZH_DEVICES, "tool": _ZH_TOOLS,
         "name": _ZH_NAMES}
        if zh
        else {"obj": _OBJECTS, "color": _COLORS, "device": _DEVICES, "tool": _TOOLS,
              "name": _NAMES}
    )  # fmt: skip
    while True:
        slots = {k: rng.choice(v) for k, v in pools.items()}
        slots.update(
            month=rng.choice(_MONTHS), m=str(rng.randint(1, 12)), day=str(rng.randint(2, 28)),
            year=str(rng.randint(2026, 2031)), n=str(rng.randint(3, 12)),
        )  # fmt: skip
        q = question.format(**slots)
        if q not in used:
            used.add(q)
            return fact.format(**slots), q


def chat(sessions: int, exchanges: int, seed: int = 19) -> tuple[str, list[dict[str, Any]]]:
    """A JSON conversation and its questions. Every other session is in Chinese."""
    rng = random.Random(seed)
    day = datetime(2025, 5, 3, 9, 0, tzinfo=UTC)
    out, questions = [], []
    used: set[str] = set()
    for s in range(sessions):
        zh = s % 2 == 1
        topics = _ZH_TOPICS if zh else _EN_TOPICS
        messages = []
        for e in range(exchanges):
            i = len(questions)
            topic = topics[(s + e) % len(topics)]
            words = LENGTHS[i % len(LENGTHS)]
            body = sentences_zh(rng, topic, 2 * words) if zh else sentences_en(rng, topic, words)
            fact, question = _fact(rng, i, zh, used)
            position = POSITIONS[i % len(POSITIONS)]
            at = {"start": 0, "middle": len(body) // 2, "end": len(body)}[position]
            body.insert(at, fact)
            key = f"S{s + 1}:{2 * e + 2}"
            messages += [
                {"id": f"S{s + 1}:{2 * e + 1}", "speaker": "Robin",
                 "text": _fill(rng, rng.choice(_ZH_USER if zh else _EN_USER), topic)},
                {"id": key, "speaker": "Assistant", "text": ("" if zh else " ").join(body)},
            ]  # fmt: skip
            questions.append({
                "question": question, "evidence": key, "position": position,
                "language": "zh" if zh else "en", "answer_words": words, "fact": fact,
            })  # fmt: skip
        started = (day + timedelta(days=4 * s)).isoformat()
        out.append({"started_at": started, "messages": messages})
    text = json.dumps({"title": "household advice", "sessions": out}, ensure_ascii=False)
    return text, questions


# ---------------------------------------------------------------- the child (either tree)

_CHILD = r"""
import json, sys, time
from pathlib import Path
from memflow.embed.factory import make_embedder
from memflow.memory import Memory

url, chat, qpath, spec, budgets, modes = sys.argv[1:7]
budgets = [int(b) for b in budgets.split(",")]
questions = json.loads(Path(qpath).read_text(encoding="utf-8"))
with Memory.open(url, embedder=make_embedder(spec), auto_upgrade=True) as mem:
    ds = mem.dataset("longturns")
    t0 = time.perf_counter()
    report = ds.memorize([Path(chat).read_bytes()], extractor="rules", content_type="conversation")
    ingest_s = time.perf_counter() - t0
    doc = report.documents[0]
    rows, ms = [], []
    for q in questions:
        for mode in modes.split(","):
            for budget in budgets:
                t = time.perf_counter()
                resp = ds.search(q["question"], mode=mode, display="highly_related",
                                 budget_tokens=budget)
                ms.append((time.perf_counter() - t) * 1000)
                units = resp.context_units
                if units and hasattr(units[0], "citations"):
                    how = "citations"
                    hit = any(c.document_id == doc.id and c.key == q["evidence"]
                              for u in units for c in u.citations)
                else:
                    how = "sources"
                    hit = any(q["evidence"] in u.sources for u in units)
                shown = " ".join(resp.context.split())
                rows.append({"question": q["question"], "mode": mode, "budget": budget,
                             "hit": hit, "units": len(units), "provenance": how,
                             "sentence": " ".join(q["fact"].split()) in shown,
                             "tokens": sum(u.tokens for u in units)})
    stats = ds.stats()
print(json.dumps({
    "memflow": __import__("memflow").__file__, "status": doc.status, "ingest_s": ingest_s,
    "facet_points": doc.facet_points, "stored": stats, "rows": rows, "search_ms": ms,
}))
"""


def run_side(tree: Path, url: str, chat_path: Path, q_path: Path, spec: str) -> dict[str, Any]:
    budgets = ",".join(str(b) for b in BUDGETS)
    return run_in_tree(
        tree, _CHILD, url, str(chat_path), str(q_path), spec, budgets, ",".join(MODES)
    )


def summarise(side: dict[str, Any], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall per mode and budget (overall, by position, by language) and monotonicity."""
    meta = {q["question"]: q for q in questions}
    hits: dict[tuple[str, str, int], bool] = {
        (r["mode"], r["question"], r["budget"]): r["hit"] for r in side["rows"]
    }
    shown: dict[tuple[str, str, int], bool] = {
        (r["mode"], r["question"], r["budget"]): r["sentence"] for r in side["rows"]
    }
    out: dict[str, Any] = {}
    for mode in MODES:
        recall: dict[str, Any] = {}
        for group, keep in (
            [("all", lambda q: True)]
            + [(p, lambda q, p=p: q["position"] == p) for p in POSITIONS]
            + [(lang, lambda q, lang=lang: q["language"] == lang) for lang in ("en", "zh")]
        ):
            qs = [q for q in questions if keep(q)]
            recall[group] = {
                str(b): round(sum(hits[(mode, q["question"], b)] for q in qs) / len(qs), 4)
                if qs
                else None
                for b in BUDGETS
            }
        violations = [
            {"question": q, "position": meta[q]["position"],
             "recall": {str(b): hits[(mode, q, b)] for b in BUDGETS}}
            for q in meta
            if any(hits[(mode, q, a)] and not hits[(mode, q, b)]
                   for a, b in pairwise(BUDGETS))
        ]  # fmt: skip
        sentence = {
            str(b): round(sum(shown[(mode, q, b)] for q in meta) / len(meta), 4) for b in BUDGETS
        }
        out[mode] = {"recall": recall, "sentence_shown": sentence,
                     "monotonic_violations": violations}  # fmt: skip
    provenance = sorted({r["provenance"] for r in side["rows"]})
    return {
        "ingest_s": round(side["ingest_s"], 2),
        "facet_points": side["facet_points"],
        "search_p50_ms": common.percentiles(side["search_ms"])["p50"],
        "provenance": provenance,
        "modes": out,
    }


def markdown(data: dict[str, Any]) -> str:
    st = data["stamp"]["settings"]
    out = [
        "# Evidence recall on long turns, before and after (issue 19)",
        "",
        common.stamp_markdown(data["stamp"]),
        "",
        f"A generated advice chat: {st['sessions']} sessions (every other one in Chinese) of "
        f"{st['exchanges']} exchanges; assistant answers of {min(LENGTHS)} to {max(LENGTHS):,} "
        "words (Chinese: twice as many characters), each hiding one evidence sentence (a fact "
        "with invented names and numbers) at its start, middle or end; one question per fact. "
        f"{data['questions']} questions. Each side memorised the chat (rules extractor, "
        f"`{st['embedder']}` embedder) in its own process and database, then ran one "
        "`highly_related` search per question, mode and budget. Recall = the share of questions "
        "whose evidence turn is cited by a unit of the packed context (after: `citations`, "
        "document id and message key; before: `sources`, message keys of the only document); "
        "a unit citing a turn may show only part of it, so sentence@budget is the share whose "
        "evidence sentence itself is in the context text.",
        "",
    ]
    rows = []
    for side in ("before", "after"):
        s = data[side]
        for mode in MODES:
            r = s["modes"][mode]["recall"]
            rows.append([
                side, mode, *[r["all"][str(b)] for b in BUDGETS],
                *[r[p]["1000"] for p in POSITIONS], r["en"]["1000"], r["zh"]["1000"],
                len(s["modes"][mode]["monotonic_violations"]),
                *[s["modes"][mode]["sentence_shown"][str(b)] for b in BUDGETS],
            ])  # fmt: skip
    out.append(common.md_table(
        ["side", "mode", *[f"ev@{b}" for b in BUDGETS], "start @1000", "middle @1000",
         "end @1000", "en @1000", "zh @1000", "non-monotonic questions",
         *[f"sentence@{b}" for b in BUDGETS]],
        rows,
    ))  # fmt: skip
    out += ["", common.md_table(
        ["side", "tree", "ingest s", "facet points", "search p50 ms", "provenance"],
        [[side, data["trees"][side], data[side]["ingest_s"], data[side]["facet_points"],
          data[side]["search_p50_ms"], ", ".join(data[side]["provenance"])]
         for side in ("before", "after")],
    )]  # fmt: skip
    for side in ("before", "after"):
        for mode in MODES:
            for v in data[side]["modes"][mode]["monotonic_violations"]:
                marks = ", ".join(f"@{b}: {'hit' if h else 'miss'}" for b, h in v["recall"].items())
                out.append(f"- {side} {mode}, not monotonic ({v['position']}): {v['question']} "
                           f"({marks})")  # fmt: skip
    if data.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in data["notes"]]]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description="evidence recall on long turns, before and after")
    ap.add_argument("--base-tree", type=Path, help="the base commit's worktree (default: this one)")
    ap.add_argument("--database-url", help="server for the scratch databases (default: embedded)")
    ap.add_argument("--home", type=Path, help="embedded server home")
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (hash embedder)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--embedder", help="embedder spec (default local; quick: hash)")
    ap.add_argument("--sessions", type=int, help="chat sessions (default 6; quick 2)")
    ap.add_argument("--exchanges", type=int, help="question/answer pairs per session (default 4)")
    ap.add_argument("--note", action="append", default=[], help="a note for the Markdown")
    ap.add_argument("--render-only", action="store_true", help="rewrite longturns.md from json")
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "longturns", args.note, markdown)
    sessions = args.sessions or (2 if args.quick else 6)
    exchanges = args.exchanges or (2 if args.quick else 4)
    spec = args.embedder or ("hash" if args.quick else "local")
    base = (args.base_tree or common.REPO).resolve()
    work = args.out / ".work-longturns"
    work.mkdir(parents=True, exist_ok=True)
    text, questions = chat(sessions, exchanges)
    chat_path, q_path = work / "chat.json", work / "questions.json"
    chat_path.write_text(text, encoding="utf-8")
    q_path.write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    admin = common.server_url(args.database_url, args.home)
    data: dict[str, Any] = {"questions": len(questions), "trees": {}}
    started = time.perf_counter()
    for side, tree in (("before", base), ("after", common.REPO)):
        with common.scratch_database(admin, f"mfbench_lt_{side}", migrated=False) as url:
            raw = run_side(tree, url, chat_path, q_path, spec)
        data[side] = summarise(raw, questions)
        data["trees"][side] = common_commit(tree)[:12]
    data["seconds"] = round(time.perf_counter() - started, 1)
    data["stamp"] = common.stamp(
        {"quick": args.quick, "sessions": sessions, "exchanges": exchanges, "embedder": spec,
         "budgets": list(BUDGETS), "base_tree": str(base)}
    )  # fmt: skip
    data["notes"] = list(args.note)
    common.write_json(args.out / "longturns.json", data)
    common.write_text(args.out / "longturns.md", markdown(data))
    for p in (chat_path, q_path):
        p.unlink()
    work.rmdir()
    return data


if __name__ == "__main__":
    main()
