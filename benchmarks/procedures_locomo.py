"""How many LoCoMo sessions the rules extractor reads a procedure from (offline, no store).

LoCoMo is chat between friends: a procedure found there is a false positive. Runs the rules
extractor's procedure detection over every session of every conversation and writes the share
of sessions that yield one, with the names found (the texts themselves are not written).

    python -m benchmarks.procedures_locomo [--data ../shared/data/locomo10.json] [--out DIR]

Writes ``procedures-locomo.json`` and its page ``procedures-locomo.md`` (:func:`markdown`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.locomo import DATA, load, session_documents
from memflow.ingest.procedures import dialog_procedures, text_procedures

NAME = "procedures-locomo"


def markdown(res: dict[str, Any]) -> str:
    st = res["stamp"]
    table = common.md_table(
        ["conversations", "sessions", "sessions with a procedure", "share", "steps",
         "same turns read as a text document"],
        [[res["conversations"], res["sessions"], res["sessions_with_a_procedure"], res["share"],
          res["steps"], res["sessions_with_a_procedure_read_as_text"]]],
    )  # fmt: skip
    return "\n".join(
        [
            "# Procedures found in LoCoMo's dialog (false positives)",
            "",
            f"Produced by `{st.get('command') or 'python -m benchmarks.procedures_locomo'}` "
            "(`benchmarks/procedures_locomo.py`; offline, no store). The rules extractor's "
            "procedure detection over every session of the LoCoMo conversations: chat between "
            "friends, so any procedure found there is a false positive. The last column reads the "
            "same turns as one plain text document (what a text paste of a chat gives).",
            "",
            table,
            "",
            "With no procedure found, a LoCoMo store holds no Procedure rows and the episodic "
            "search ranks as without procedures (its SQL reads only the episodic collections); "
            "a how-to question finds no procedure to add."
            if res["sessions_with_a_procedure"] == 0
            else "Procedures were found: a LoCoMo store holds Procedure rows, and how-to "
            "questions can rank one first (a change of the LoCoMo figures to measure).",
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
        help="rewrite procedures-locomo.md from procedures-locomo.json",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, NAME, [], markdown)
    st = common.stamp({"data": args.data.name}, __file__, argv)
    convs, _ = load(args.data)
    sessions = with_procedure = steps = 0
    as_text = 0
    for conv in convs:
        for doc in session_documents(conv, None):
            sessions += 1
            found = dialog_procedures(doc.chunks)
            with_procedure += bool(found)
            steps += sum(len(p.steps) for p, _ in found)
            # The same turns read as a plain text document (what a text paste of a chat gives).
            lines = "\n".join(f"{c.speaker}: {c.text}" for c in doc.chunks)
            as_text += bool(text_procedures(doc.model_copy(update={"text": lines})))
    res = {
        "stamp": st,
        "conversations": len(convs),
        "sessions": sessions,
        "sessions_with_a_procedure": with_procedure,
        "share": round(with_procedure / sessions, 4) if sessions else 0.0,
        "steps": steps,
        "sessions_with_a_procedure_read_as_text": as_text,
    }
    common.write_json(args.out / f"{NAME}.json", res)
    common.write_text(args.out / f"{NAME}.md", markdown(res))
    print(markdown(res))
    return res


if __name__ == "__main__":
    main()
