"""Ingest of long inputs, before and after (issue 14): a long-turn chat and a Markdown journal.

Both inputs are generated here from templates with varied wording (English and Chinese; no
dataset text). Each side runs in a child process whose ``memflow`` is imported from a given
source tree (``--base-tree``: a ``git worktree`` of the base commit; this tree for "after"), on
its own scratch database, with the same local embedder. The child times the embedding model,
the rules extractor (minus the embedding inside it) and the writer (minus the embedding inside
it: SQL), counts the texts sent to the model and the distinct ones, and reports its peak RSS.

Run through ``python -m benchmarks.ingest --long-only --base-tree /tmp/ingest-base``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks import common

# ---------------------------------------------------------------- generated inputs

_EN_TOPICS = (
    ("the garden irrigation", "drip lines", "the north bed"),
    ("the bakery's sourdough", "the starter", "the proofing room"),
    ("the bicycle commute", "the chain", "the river path"),
    ("the home network", "the router", "the attic"),
    ("the choir rehearsal", "the alto part", "the church hall"),
    ("the kitchen renovation", "the cabinets", "the east wall"),
)
_EN_OPEN = (
    "Here is how I would approach {t}.",
    "Good question about {t}; there are a few parts to it.",
    "Let me walk through {t} step by step.",
    "There are several things worth checking with {t}.",
)
_EN_BODY = (
    "First, look at {a} and note how it behaves over {n} days, because small changes add up.",
    "In my experience {a} near {p} needs attention every {n} weeks or so.",
    "A common mistake is to adjust {a} and {t} at the same time, which hides the real cause.",
    "If the numbers drift by more than {n} percent, write down the date and what changed.",
    "You can compare this week's results with the last {n} entries to see a pattern.",
    "Keep a short log next to {p}; even two lines a day make the trend visible.",
    "Budget about {n} minutes for each check, and do them at the same time of day.",
    "When {a} looks fine but {t} still misbehaves, the problem is usually upstream.",
    "Ask whoever set up {p} originally; they often remember a detail that matters.",
    "It also helps to take a photo of {a} before you touch anything, so you can undo it.",
    "Around {n} out of ten cases I have seen were solved by cleaning rather than replacing.",
    "Do not buy new parts for {a} until the simple checks have ruled out the obvious.",
)
_EN_CLOSE = (
    "Let me know what you find and we can narrow it down.",
    "If that does not help, send me the log and we will look again.",
    "Try this for a week and tell me how {t} behaves.",
)
_EN_USER = (
    "I have a problem with {t}, any advice?",
    "What should I check first with {a}?",
    "Thanks. And how often should I look at {p}?",
    "Could you summarise what matters most for {t}?",
)
_ZH_TOPICS = (
    ("阳台花园的浇水", "滴灌管", "北面的花坛"),
    ("面包房的酸面种", "酵头", "发酵间"),
    ("每天骑车通勤", "链条", "河边小路"),
    ("家里的网络", "路由器", "阁楼"),
    ("合唱团排练", "女低音声部", "教堂大厅"),
)
_ZH_BODY = (
    "首先观察{a}在{n}天里的变化，小的变化累积起来就很明显。",
    "根据我的经验，{p}附近的{a}大约每{n}周需要检查一次。",
    "常见的错误是同时调整{a}和{t}，这样反而看不出真正的原因。",
    "如果数字波动超过百分之{n}，就记下日期和做过的改动。",
    "可以把这周的结果和之前{n}次的记录放在一起比较，找出规律。",
    "在{p}旁边放一个简单的记录本，每天写两行就能看出趋势。",
    "每次检查大约留出{n}分钟，最好每天在同一时间进行。",
    "如果{a}看起来正常但{t}仍然有问题，原因通常在上游。",
    "动手之前先给{a}拍张照片，这样需要时可以恢复原样。",
    "我见过的情况里，大约十分之{n}是靠清洁而不是更换解决的。",
)
_ZH_USER = ("关于{t}我遇到了一些问题，有什么建议吗？", "谢谢。那{p}应该多久检查一次？")


def _fill(rng: random.Random, template: str, topic: tuple[str, str, str]) -> str:
    t, a, p = topic
    return template.format(t=t, a=a, p=p, n=rng.randint(2, 9))


def sentences_en(rng: random.Random, topic: tuple[str, str, str], words: int) -> list[str]:
    """The sentences of an English advice answer of at least ``words`` words."""
    out = [_fill(rng, rng.choice(_EN_OPEN), topic)]
    while sum(len(s.split()) for s in out) < words:
        out.append(_fill(rng, rng.choice(_EN_BODY), topic))
    out.append(_fill(rng, rng.choice(_EN_CLOSE), topic))
    return out


def sentences_zh(rng: random.Random, topic: tuple[str, str, str], chars: int) -> list[str]:
    """The sentences of a Chinese advice answer of at least ``chars`` characters."""
    out: list[str] = []
    while sum(len(s) for s in out) < chars:
        out.append(_fill(rng, rng.choice(_ZH_BODY), topic))
    return out


def _assistant_en(rng: random.Random, topic: tuple[str, str, str], words: int) -> str:
    return " ".join(sentences_en(rng, topic, words))


def _assistant_zh(rng: random.Random, topic: tuple[str, str, str], chars: int) -> str:
    return "".join(sentences_zh(rng, topic, chars))


def long_turn_chat(sessions: int, exchanges: int, words: int = 320, seed: int = 3) -> str:
    """A JSON conversation: per session ``exchanges`` user questions, each answered by an
    assistant turn of at least ``words`` words (every third session in Chinese, ~2 chars/word)."""
    rng = random.Random(seed)
    day = datetime(2025, 2, 1, 9, 0, tzinfo=UTC)
    out = []
    for s in range(sessions):
        zh = s % 3 == 2
        topics = _ZH_TOPICS if zh else _EN_TOPICS
        messages = []
        for e in range(exchanges):
            topic = topics[(s + e) % len(topics)]
            user = _fill(rng, rng.choice(_ZH_USER if zh else _EN_USER), topic)
            answer = (
                _assistant_zh(rng, topic, 2 * words) if zh else _assistant_en(rng, topic, words)
            )
            messages += [
                {"id": f"S{s + 1}:{2 * e + 1}", "speaker": "Robin", "text": user},
                {"id": f"S{s + 1}:{2 * e + 2}", "speaker": "Assistant", "text": answer},
            ]
        started = (day + timedelta(days=3 * s)).isoformat()
        out.append({"started_at": started, "messages": messages})
    return json.dumps({"title": "advice chat", "sessions": out}, ensure_ascii=False)


def journal(kb: int, seed: int = 7) -> str:
    """A Markdown journal of about ``kb`` KB: a dated section per day, a few paragraphs each."""
    rng = random.Random(seed)
    day = datetime(2024, 1, 1, tzinfo=UTC)
    parts = ["# Journal\n"]
    size = 0
    i = 0
    while size < kb * 1024:
        zh = i % 4 == 3
        topics = _ZH_TOPICS if zh else _EN_TOPICS
        topic = topics[i % len(topics)]
        lines = [f"\n## {day + timedelta(days=i):%Y-%m-%d}\n"]
        for _ in range(rng.randint(2, 4)):
            if zh:
                lines.append(_assistant_zh(rng, topic, rng.randint(80, 200)))
            else:
                lines.append(_assistant_en(rng, topic, rng.randint(40, 110)))
            lines.append("")
        block = "\n".join(lines)
        parts.append(block)
        size += len(block.encode("utf-8"))
        i += 1
    return "\n".join(parts)


# ---------------------------------------------------------------- the child (either tree)

_CHILD = r"""
import json, resource, sys, threading, time
from collections import defaultdict
from pathlib import Path
import memflow.ingest.rules as rules
import memflow.store.writer as writer
from memflow.embed.local import LocalEmbedder
from memflow.memory import Memory

url, path, kind, floor_path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
clock = {"embed": 0.0, "extract": 0.0, "write": 0.0}
# Time in the model by thread: memorize may extract the next document in a worker thread while
# the main one writes rows; a stage's own time excludes only its own thread's model time.
embed_by_thread = defaultdict(float)
sent, distinct, tokens = [0], set(), [0]

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

class Timed(LocalEmbedder):
    def embed_passages(self, texts):
        t0 = time.perf_counter()
        try:
            return super().embed_passages(texts)
        finally:
            spent = time.perf_counter() - t0
            clock["embed"] += spent
            embed_by_thread[threading.get_ident()] += spent

    def _embed_batch(self, texts, is_query):
        if not is_query:
            sent[0] += len(texts)
            distinct.update(texts)
            tokens[0] += sum(int(model.token_count(t)) for t in texts)
        return super()._embed_batch(texts, is_query)

def floor():
    # The floor: each turn text embedded once, as the model reads it, 16 texts a call.
    texts = json.loads(Path(floor_path).read_text(encoding="utf-8")) if floor_path else []
    t0, c0 = time.perf_counter(), cpu()
    for i in range(0, len(texts), 16):
        LocalEmbedder.embed_passages(emb, texts[i : i + 16])
    return time.perf_counter() - t0, cpu() - c0

def timed(cls, name, key):
    inner = getattr(cls, name)
    def wrapper(*a, **kw):
        me = threading.get_ident()
        t0, e0 = time.perf_counter(), embed_by_thread[me]
        try:
            return inner(*a, **kw)
        finally:
            clock[key] += (time.perf_counter() - t0) - (embed_by_thread[me] - e0)
    setattr(cls, name, wrapper)

timed(rules.RulesExtractor, "extract", "extract")
timed(writer.Writer, "_write_rows", "write")
from memflow.embed.local import _model
model = _model()
emb = Timed()
emb.embed_passages(["warm up the model"])
floor_before = floor()
clock["embed"] = 0.0
sent[0] = tokens[0] = 0
distinct.clear()
if kind == "sessions":  # a JSON list of conversations, one document each, not routed
    data = [t.encode() for t in json.loads(Path(path).read_text(encoding="utf-8"))]
    opts = {"content_type": "conversation", "routing": False}
else:
    data, opts = [Path(path).read_bytes()], {"content_type": kind}
with Memory.open(url, embedder=emb, auto_upgrade=True) as mem:
    ds = mem.dataset("bench")
    t0, c0 = time.perf_counter(), cpu()
    report = ds.memorize(data, extractor="rules", **opts)
    seconds, cpu_s = time.perf_counter() - t0, cpu() - c0
    stats = ds.stats()
docs = report.documents
sent_counts = (sent[0], len(distinct), tokens[0])
floor_after = floor()
print(json.dumps({
    "memflow": __import__("memflow").__file__,
    "status": ",".join(sorted({d.status for d in docs})), "documents": len(docs),
    "error": next((d.error for d in docs if d.error), None), "seconds": seconds, "cpu_s": cpu_s,
    "embed_s": clock["embed"], "extract_s": clock["extract"], "sql_write_s": clock["write"],
    "texts_sent": sent_counts[0], "texts_distinct": sent_counts[1],
    "tokens_sent": sent_counts[2],
    "floor_s": [floor_before[0], floor_after[0]], "floor_cpu_s": [floor_before[1], floor_after[1]],
    "facet_points": sum(d.facet_points for d in docs), "stored": stats,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def run_in_tree(tree: Path, code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a child process importing ``memflow`` from ``tree``; its last stdout line
    is a JSON object (which says where ``memflow`` came from, checked here)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_WAIT_POLICY": "PASSIVE"}
    res = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, env=env, cwd=tree, timeout=3600, check=False,
    )  # fmt: skip
    if res.returncode != 0:
        raise RuntimeError(f"benchmark child in {tree} failed:\n{res.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    if not str(out.get("memflow", "")).startswith(str(tree.resolve())):
        raise RuntimeError(f"the child imported memflow from {out.get('memflow')}, not {tree}")
    return out


def run_side(
    tree: Path, url: str, path: Path, kind: str, floor: Path | None = None
) -> dict[str, Any]:
    """One side's memorize of ``path``; with ``floor`` (a JSON list of the turn texts) also the
    time to embed each of them once, measured before and after the memorize (load drifts)."""
    out = run_in_tree(tree, _CHILD, url, str(path), kind, str(floor or ""))
    out["other_s"] = out["seconds"] - out["embed_s"] - out["extract_s"] - out["sql_write_s"]
    for k, v in list(out.items()):
        if isinstance(v, float):
            out[k] = round(v, 2)
        elif isinstance(v, list):
            out[k] = [round(x, 2) for x in v]
    return out


def locomo_sessions(count: int) -> tuple[str, int]:
    """The first ``count`` sessions of LoCoMo (conversations in file order) as a JSON list of
    session conversations, and their number of turns (short turns: issue 14's input (a))."""
    from benchmarks import locomo

    convs, _ = locomo.load(locomo.DATA)
    texts, turns = [], 0
    for conv in convs:
        for number, date, session in conv.sessions:
            if len(texts) < count:
                texts.append(locomo.session_json(conv, number, date, session))
                turns += len(session)
    return json.dumps(texts, ensure_ascii=False), turns


def long_phase(
    admin: str,
    base_tree: Path,
    work: Path,
    sessions: int,
    exchanges: int,
    journal_kb: int,
    locomo_count: int = 0,
) -> dict[str, Any]:
    """Before (``base_tree``) and after (this tree) on the same inputs, one run."""
    work.mkdir(parents=True, exist_ok=True)
    chat = work / "long_turn_chat.json"
    text = long_turn_chat(sessions, exchanges)
    chat.write_text(text, encoding="utf-8")
    floor = work / "turn_texts.json"
    turn_texts = [m["text"] for s in json.loads(text)["sessions"] for m in s["messages"]]
    floor.write_text(json.dumps(turn_texts, ensure_ascii=False), encoding="utf-8")
    md = work / "journal.md"
    md.write_text(journal(journal_kb), encoding="utf-8")
    inputs: dict[str, tuple[Path, str, int | None]] = {
        "long_turn_chat": (chat, "conversation", len(turn_texts)),
        "journal": (md, "markdown", None),
    }
    if locomo_count:
        lc = work / "locomo_sessions.json"
        body, n = locomo_sessions(locomo_count)
        lc.write_text(body, encoding="utf-8")
        inputs["locomo_sessions"] = (lc, "sessions", n)
    out: dict[str, Any] = {"base_tree_commit": common_commit(base_tree), "inputs": {}}
    for name, (path, kind, n_turns) in inputs.items():
        size_kb = path.stat().st_size / 1024
        sides = {}
        for side, tree in (("before", base_tree), ("after", common.REPO)):
            with_floor = floor if name == "long_turn_chat" and side == "after" else None
            with common.scratch_database(admin, f"mfbench_long_{side}", migrated=False) as url:
                r = run_side(tree, url, path, kind, with_floor)
            r["kb_per_s"] = round(size_kb / r["seconds"], 2)
            if n_turns:
                r["turns_per_s"] = round(n_turns / r["seconds"], 3)
            sides[side] = r
        out["inputs"][name] = {"kb": round(size_kb, 1), "turns": n_turns, **sides}
        out["inputs"][name]["ratios"] = ratios(sides["before"], sides["after"])
    return out


def ratios(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float | None]:
    """Speed-up of after over before (wall and process CPU) and, with a floor, after / floor."""
    out: dict[str, float | None] = {
        "speedup_wall": round(before["seconds"] / after["seconds"], 2),
        "speedup_cpu": round(before["cpu_s"] / after["cpu_s"], 2),
        "tokens_before_over_after": round(before["tokens_sent"] / after["tokens_sent"], 2),
    }
    floor, floor_cpu = after.get("floor_s") or [], after.get("floor_cpu_s") or []
    if floor and sum(floor) > 0:
        out["after_over_floor_wall"] = round(after["seconds"] / (sum(floor) / len(floor)), 2)
        out["after_over_floor_cpu"] = round(after["cpu_s"] / (sum(floor_cpu) / len(floor)), 2)
    return out


def common_commit(tree: Path) -> str:
    res = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return res.stdout.strip()


def markdown_section(data: dict[str, Any], st: dict[str, Any] | None = None) -> list[str]:
    st = st or data.get("stamp")  # before ingest-long.json, the section carried its own stamp
    out = [
        "## Long inputs, before and after (issue 14)",
        "",
        *([common.stamp_markdown(st), ""] if st else []),
        "Generated inputs (and LoCoMo's first sessions, short turns), local embedder, rules "
        f"extractor; before = `{data['base_tree_commit'][:12]}` (its own worktree), after = "
        "this commit; same run, each side in its own process and scratch database. seconds = "
        "wall time of the memorize call; CPU s = the process's user + system time in it (both "
        "cores; the model runs on OpenMP), the steadier measure on a loaded machine; embed = "
        "time in the model; extract = rules extractor minus embedding; SQL = writer minus "
        "embedding; texts = sent to the model / distinct; tokens = e5 tokens sent.",
        "",
    ]
    rows = []
    for name, d in data["inputs"].items():
        for side in ("before", "after"):
            r = d[side]
            rows.append([
                name, side, d["kb"], d["turns"] or "", r["seconds"], r.get("cpu_s", ""),
                r.get("turns_per_s", ""), r["kb_per_s"], r["embed_s"], r["extract_s"],
                r["sql_write_s"], f"{r['texts_sent']} / {r['texts_distinct']}",
                r.get("tokens_sent", ""), r["facet_points"], r["peak_rss_mb"],
            ])  # fmt: skip
    out.append(common.md_table(
        ["input", "side", "KB", "turns", "seconds", "CPU s", "turns/s", "KB/s", "embed s",
         "extract s", "SQL s", "texts", "tokens", "points", "peak RSS MB"],
        rows,
    ))  # fmt: skip
    out += ["", common.md_table(
        ["input", "speed-up (wall)", "speed-up (CPU)", "tokens before / after",
         "after / floor (wall)", "after / floor (CPU)"],
        [[name, r["speedup_wall"], r["speedup_cpu"], r["tokens_before_over_after"],
          r.get("after_over_floor_wall", ""), r.get("after_over_floor_cpu", "")]
         for name, d in data["inputs"].items() for r in [d.get("ratios", {})] if r],
    )]  # fmt: skip
    chat = data["inputs"]["long_turn_chat"]["after"]
    if chat.get("floor_s"):
        out += ["", f"Floor (each turn text embedded once, 16 a call, as the model reads it), "
                f"measured in the after process before and after its memorize: wall "
                f"{chat['floor_s']} s, CPU {chat['floor_cpu_s']} s."]  # fmt: skip
    return out


__all__ = [
    "journal", "locomo_sessions", "long_phase", "long_turn_chat", "markdown_section", "ratios",
    "run_in_tree",
    "sentences_en", "sentences_zh",
]  # fmt: skip
