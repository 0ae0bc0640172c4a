"""How many LoCoMo sessions the rules extractor reads a procedure from (offline, no store).

LoCoMo is chat between friends: a procedure found there is a false positive. Runs the rules
extractor's procedure detection over every session of every conversation and writes the share
of sessions that yield one, with the names found (the texts themselves are not written).

    python -m benchmarks.procedures_locomo [--data ../shared/data/locomo10.json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import DEFAULT_OUT, REPO
from benchmarks.locomo import load, session_documents
from memflow.ingest.procedures import dialog_procedures, text_procedures

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo10.json"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT / "procedures-locomo.json")
    args = ap.parse_args(argv)
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
        "conversations": len(convs),
        "sessions": sessions,
        "sessions_with_a_procedure": with_procedure,
        "share": round(with_procedure / sessions, 4) if sessions else 0.0,
        "steps": steps,
        "sessions_with_a_procedure_read_as_text": as_text,
    }
    args.out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
