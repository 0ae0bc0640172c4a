"""Facts that change, on the frozen hand-written sets (issue 26): ``benchmarks/data/
updates_handwritten.json`` (set 1, committed before any tuning in 71a6ef0) and
``updates_handwritten2.json`` (set 2, by another author, committed before any tuning in 0e2c2e4)
and ``updates_handwritten3.json`` (set 3, a third author, 964be1c) and ``updates_handwritten4.json``
(set 4, a fourth author, 86a482b) and ``updates_handwritten5.json`` (set 5, a fifth, bd959bf)
and ``updates_handwritten6.json`` (set 6, a sixth, a10f969) and ``updates_handwritten7.json``
(set 7, a seventh, 65f3ff6) and ``updates_handwritten8.json`` (set 8, an eighth, caadcca) and
``updates_handwritten9.json`` (set 9, a ninth, f58f8d9);
format and provenance:
``benchmarks/data/README.md``. Each was written by an author who had not read the rules, and none
is ever edited.

Each case is a small world: its documents are written to a folder under their own names (a
conversation as ``.json``) and that folder is memorised into a fresh dataset today, with no
reference time, as a user would: every date comes from the documents themselves. Then, with the
default agent context (``display="highly_related"``, 500 tokens):

- **current first** (change cases): the first ``current`` substring of the context comes before
  the first ``stale`` one (the current value absent is a miss);
- **stale unmarked**: a context line shows a ``stale`` value without a mark (``[superseded, …]``
  or ``[possibly outdated: …]``), unless it comes from a document that states the current value
  (such a document may name the old value after the new one: README);
- **control right** (control cases): the ``current`` value is in the context and not marked;
- **as-of**: for each ``as_of`` question, searched with ``as_of`` = that day, an ``expect``
  substring is in the context and no ``not`` one;
- **false closures**: FacetPoints of a control case that state its ``current`` value (the fact
  that must hold) and were closed; other closures in a control's documents are listed.

Halves: within each (language, kind), cases are ordered by the SHA-256 of their id; the first
half (rounded up) is ``tune``, the rest ``test``. Constants are chosen on ``tune`` only.

    python -m benchmarks.updates_handwritten            # set 1, both halves, local e5 embedder
    python -m benchmarks.updates_handwritten --set 2    # the second set (--set 3, --set 4: the third, the fourth)
    python -m benchmarks.updates_handwritten --half tune --show   # every tune miss, with context
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from benchmarks import common
from memflow.db.engine import transaction
from memflow.memory import Dataset, Memory
from memflow.recall.present import OUTDATED_MARK
from memflow.recall.types import SUPERSEDED_MARK

SETS = {
    "1": common.REPO / "benchmarks" / "data" / "updates_handwritten.json",
    "2": common.REPO / "benchmarks" / "data" / "updates_handwritten2.json",
    "3": common.REPO / "benchmarks" / "data" / "updates_handwritten3.json",
    "4": common.REPO / "benchmarks" / "data" / "updates_handwritten4.json",
    "5": common.REPO / "benchmarks" / "data" / "updates_handwritten5.json",
    "6": common.REPO / "benchmarks" / "data" / "updates_handwritten6.json",
    "7": common.REPO / "benchmarks" / "data" / "updates_handwritten7.json",
    "8": common.REPO / "benchmarks" / "data" / "updates_handwritten8.json",
    "9": common.REPO / "benchmarks" / "data" / "updates_handwritten9.json",
}
DATA = SETS["1"]
HALVES = ("tune", "test")
MARKS = (SUPERSEDED_MARK, OUTDATED_MARK)
FORMATS = ("markdown", "text", "email", "conversation")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def load(path: Path = DATA) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return cases


def validate(cases: Sequence[dict[str, Any]]) -> list[str]:
    """Every way ``cases`` break the format and the properties ``benchmarks/data/README.md``
    promises (empty when none): unique ids and file names, known languages, kinds and formats,
    a question, ``current`` substrings, ``stale`` ones for a change and none for a control,
    ``as_of`` days as ``YYYY-MM-DD``, no ``current`` substring inside a ``stale`` one or the
    reverse, a document (a session, for conversations) that names the current value names it
    before any old one, and at least one document that names neither."""
    problems: list[str] = []
    say = problems.append
    seen: set[str] = set()
    for c in cases:
        cid = str(c.get("id"))
        if cid in seen:
            say(f"{cid}: duplicate id")
        seen.add(cid)
        if c.get("lang") not in ("en", "zh") or c.get("kind") not in ("change", "control"):
            say(f"{cid}: lang must be en|zh and kind change|control")
        if not str(c.get("question", "")).strip() or not c.get("current"):
            say(f"{cid}: needs a question and current substrings")
        cur, old = list(c.get("current", [])), list(c.get("stale", []))
        if (c.get("kind") == "change") != bool(old):
            say(f"{cid}: a change needs stale substrings, a control none")
        if any(a.lower() in b.lower() or b.lower() in a.lower() for a in cur for b in old):
            say(f"{cid}: a current substring and a stale one contain each other")
        days = [str(q.get("date", "")) for q in c.get("as_of", []) if q.get("expect")]
        if len(days) != len(c.get("as_of", [])) or not all(map(_DAY.fullmatch, days)):
            say(f"{cid}: each as_of needs a YYYY-MM-DD date and expect substrings")
        problems += [f"{cid}: {p}" for p in _document_problems(c, cur, old)]
    return problems


def _document_problems(case: dict[str, Any], cur: list[str], old: list[str]) -> list[str]:
    out, names, neither = [], set(), False
    for doc in case.get("documents", []):
        if doc.get("format") not in FORMATS:
            out.append(f"{doc.get('name')}: format must be one of {', '.join(FORMATS)}")
            continue
        name = Path(_file_name(doc)).name
        if name in names:
            out.append(f"{name}: two documents with this file name")
        names.add(name)
        content = doc["content"]
        flat = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        neither |= _has(flat, cur) < 0 and (not old or _has(flat, old) < 0)
        units = (
            [json.dumps(s, ensure_ascii=False) for s in content.get("sessions", [])]
            if isinstance(content, dict)
            else [flat]
        )
        for unit in units if old else []:
            first_cur, first_old = _has(unit, cur), _has(unit, old)
            if 0 <= first_old < first_cur:
                out.append(f"{name}: names the old value before the new one")
    if not neither:
        out.append("no distractor document (one naming neither value)")
    return out


def _digest(case_id: str) -> str:
    return hashlib.sha256(case_id.encode("utf-8")).hexdigest()


def halves(cases: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Case id -> "tune" | "test": within each (language, kind), by the SHA-256 of the id, the
    first half (rounded up) tune."""
    groups: dict[tuple[str, str], list[str]] = {}
    for c in cases:
        groups.setdefault((c["lang"], c["kind"]), []).append(c["id"])
    out: dict[str, str] = {}
    for ids in groups.values():
        ordered = sorted(ids, key=_digest)
        cut = (len(ordered) + 1) // 2
        out.update({i: ("tune" if k < cut else "test") for k, i in enumerate(ordered)})
    return out


def write_documents(case: dict[str, Any], folder: Path) -> None:
    for doc in case["documents"]:
        content = doc["content"]
        if doc["format"] == "conversation":
            content = json.dumps(content, ensure_ascii=False)
        (folder / Path(_file_name(doc)).name).write_text(content, encoding="utf-8")


def _has(hay: str, needles: Sequence[str]) -> int:
    """The first position of any of ``needles`` in ``hay`` (case-insensitive), or -1."""
    low = hay.lower()
    found = [i for n in needles if (i := low.find(n.lower())) >= 0]
    return min(found) if found else -1


def _lines(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.strip() and not line.startswith("[")]


def _new_documents(case: dict[str, Any]) -> set[str]:
    """The file names of the documents that state the current value (README: the documents
    stating the old value contain none of the current substrings; a new document may name the
    old value after the new one)."""
    out = set()
    for doc in case["documents"]:
        content = doc["content"]
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if _has(text, case["current"]) >= 0:
            out.add(Path(_file_name(doc)).name)
    return out


def _file_name(doc: dict[str, Any]) -> str:
    name = str(doc["name"])
    return (
        name
        if doc["format"] != "conversation" or name.endswith(".json")
        else (f"{Path(name).stem}.json")
    )


_SPEAKER = re.compile(r"^[^:：]{1,40}[:：]\s*")
_MARK = re.compile(r"\s*\[(?:superseded|possibly outdated)[^\]]*\]\s*$")


def _sources(line: str, case: dict[str, Any]) -> set[str]:
    """The file names of the case's documents that hold the context line's statement."""
    said = _MARK.sub("", line).strip()
    bare = _SPEAKER.sub("", said)
    cells = _cells(said)
    out = set()
    for doc in case["documents"]:
        content = doc["content"]
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        flat = " ".join(text.split())
        if any(t and " ".join(t.split()) in flat for t in (said, bare)) or (
            cells and all(c in flat for c in cells)
        ):
            out.add(Path(_file_name(doc)).name)
    return out


def _cells(line: str) -> list[str]:
    """A table row's cells as the document wrote them: memflow states a row with each cell
    named by its column ("Vendor: Ledgerline | Renewal: Aug 2026")."""
    if " | " not in line:
        return []
    return [" ".join(_LABEL.sub("", c).split()) for c in line.split(" | ") if c.strip()]


_LABEL = re.compile(r"^\s*[^:：|]{1,40}[:：]\s*")


def score_change(resp: Any, case: dict[str, Any]) -> dict[str, bool]:
    context = resp.context
    cur, old = _has(context, case["current"]), _has(context, case["stale"])
    new_docs = _new_documents(case)
    unmarked = any(
        _has(line, case["stale"]) >= 0
        and not any(m in line for m in MARKS)
        # a document that states the new value may name the old one: not the old value shown
        and not (docs and docs <= new_docs)
        for line in _lines(context)
        for docs in [_sources(line, case)]
    )
    return {"current_first": cur >= 0 and (old < 0 or cur < old), "stale_unmarked": unmarked}


def score_control(context: str, case: dict[str, Any]) -> dict[str, bool]:
    lines = [line for line in _lines(context) if _has(line, case["current"]) >= 0]
    return {"control_right": any(not any(m in line for m in MARKS) for line in lines)}


def score_as_of(context: str, q: dict[str, Any]) -> bool:
    return _has(context, q["expect"]) >= 0 and _has(context, q.get("not", [])) < 0


def false_closures(closed: Sequence[str], case: dict[str, Any]) -> list[str]:
    """Closed points of a control that state its ``current`` value: the fact that must hold.
    (Other closures of a control's documents may be right: "an update of a different line
    item"; they are listed, not counted.)"""
    return [t for t in closed if _has(t, case["current"]) >= 0]


def closed_points(ds: Dataset) -> list[str]:
    ctx = ds.context
    with transaction(ctx.engine, ctx.dataset_id) as conn:
        rows = conn.execute(
            text(
                "SELECT search_text FROM memflow.node WHERE dataset_id = :ds "
                "AND kind = 'FacetPoint' AND invalid_at IS NOT NULL"
            ),
            {"ds": ctx.dataset_id},
        ).all()
    return [str(r[0]) for r in rows]


def run_case(mem: Memory, case: dict[str, Any], show: bool = False) -> dict[str, Any]:
    ds = mem.dataset(f"hw-{case['id']}")
    with tempfile.TemporaryDirectory(prefix="memflow-hw-") as tmp:
        folder = Path(tmp) / case["id"]
        folder.mkdir()
        write_documents(case, folder)
        ds.memorize(str(folder), extractor="rules")
    resp = ds.search(case["question"], display="highly_related")
    out: dict[str, Any] = {"id": case["id"], "lang": case["lang"], "kind": case["kind"]}
    if case["kind"] == "change":
        out.update(score_change(resp, case))
    else:
        out.update(score_control(resp.context, case))
        out["closed"] = closed_points(ds)
        out["false_closures"] = false_closures(out["closed"], case)
    as_of = []
    for q in case.get("as_of", []):
        day = datetime.fromisoformat(q["date"]).replace(hour=23, minute=59, tzinfo=UTC)
        got = ds.search(q["question"], display="highly_related", as_of=day)
        as_of.append(score_as_of(got.context, q))
        if show and not as_of[-1]:
            print(f"--- {case['id']} as_of {q['date']} MISS\n{got.context}\n")
    out["as_of"] = as_of
    if show:
        right = out.get("current_first", out.get("control_right"))
        print(f"--- {case['id']} ({case['kind']}) {'ok' if right else 'MISS'}: {case['question']}")
        print(resp.context + "\n")
    return out


def summarise(results: Sequence[dict[str, Any]], half_of: dict[str, str]) -> dict[str, Any]:
    """Rates per half (and "all") and language (and "all")."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for half in (*HALVES, "all"):
        for lang in ("en", "zh", "all"):
            rows = [r for r in results if half in ("all", half_of[r["id"]])
                    and lang in ("all", r["lang"])]  # fmt: skip
            changes = [r for r in rows if r["kind"] == "change"]
            controls = [r for r in rows if r["kind"] == "control"]
            as_of = [x for r in rows for x in r["as_of"]]
            table.setdefault(half, {})[lang] = {
                "changes": len(changes),
                "current_first": _rate(sum(r["current_first"] for r in changes), len(changes)),
                "stale_unmarked": _rate(sum(r["stale_unmarked"] for r in changes), len(changes)),
                "controls": len(controls),
                "control_right": _rate(sum(r["control_right"] for r in controls), len(controls)),
                "false_closures": sum(len(r["false_closures"]) for r in controls),
                "as_of_questions": len(as_of),
                "as_of_right": _rate(sum(as_of), len(as_of)),
            }
    return table


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def evaluate(
    mem: Memory,
    half: str = "all",
    show: bool = False,
    limit: int | None = None,
    data: Path = DATA,
) -> dict[str, Any]:
    """Every case of ``half`` of the set in ``data`` (``limit``: the first that many, a smoke
    run)."""
    cases = load(data)
    if problems := validate(cases):
        raise ValueError(f"{data}: not a valid hand-written set: " + "; ".join(problems[:5]))
    half_of = halves(cases)
    chosen = [c for c in cases if half in ("all", half_of[c["id"]])][:limit]
    results = []
    for i, case in enumerate(chosen, start=1):
        t0 = time.perf_counter()
        results.append(run_case(mem, case, show))
        print(f"  {i}/{len(chosen)} {case['id']} ({half_of[case['id']]}) "
              f"{time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
    return {
        "data": str(data),
        "cases": len(chosen),
        "split": "within (lang, kind), by sha256(id); first half (rounded up) tune",
        "halves": {c["id"]: half_of[c["id"]] for c in chosen},
        "results": results,
        "summary": summarise(results, half_of),
    }


def markdown_rows(summary: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for half, by_lang in summary.items():
        for lang, m in by_lang.items():
            rows.append([half, lang, f"{m['current_first']} ({m['changes']})",
                         m["stale_unmarked"], f"{m['control_right']} ({m['controls']})",
                         m["false_closures"], f"{m['as_of_right']} ({m['as_of_questions']})"])  # fmt: skip
    return rows


HEADER = ["half", "language", "current first (changes)", "stale shown unmarked",
          "controls right (n)", "false closures", "as-of right (questions)"]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--home", type=Path, default=common.DEFAULT_HOME, help="embedded server home")
    ap.add_argument("--database-url", default=None, help="use this PostgreSQL server instead")
    ap.add_argument("--embedder", default="local", help="embedder spec (local, hash, ...)")
    ap.add_argument("--half", choices=(*HALVES, "all"), default="all")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--set", choices=tuple(SETS), default="1",
                       help="which frozen hand-written set (benchmarks/data/README.md); default 1")  # fmt: skip
    which.add_argument("--data", type=Path, default=None, help="a set in the same format at PATH")
    ap.add_argument("--show", action="store_true", help="print every context and each miss")
    ap.add_argument("--out", type=Path, default=None, help="write the result JSON here")
    args = ap.parse_args(argv)
    from memflow.embed.factory import make_embedder

    embedder = make_embedder(args.embedder)
    admin = common.server_url(args.database_url, args.home)
    with (
        common.scratch_database(admin, "updates_hw") as url,
        Memory.open(url, embedder=embedder) as mem,
    ):
        res = evaluate(mem, args.half, args.show, data=args.data or SETS[args.set])
    print(common.md_table(HEADER, markdown_rows(res["summary"])))
    if args.out:
        common.write_json(args.out, res)
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
