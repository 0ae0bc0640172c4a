"""Writer processes for the reliability tests (run as ``python -m tests.reliability._writer_proc``).

hang URL DATASET DOC STAGE   write document DOC, print "at STAGE" there and wait to be killed
loop URL DATASET N           write documents 0..N-1, printing "written i" / "skipped i"
input URL DATASET KIND PATH  memorize (KIND=text) or add as drafts (KIND=drafts) the file PATH and
                             print one JSON line: {"outcome": "stored" | "rejected", ...}; a bare
                             (non-memflow) exception exits non-zero with its traceback
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from memflow.embed.hash import HashEmbedder
from memflow.errors import MemflowError
from memflow.memory import Memory

from ._support import doc_drafts


def main(argv: list[str]) -> int:
    mode, url, dataset = argv[0], argv[1], argv[2]
    with Memory.open(url, embedder=HashEmbedder(384)) as mem:
        ds = mem.dataset(dataset)
        if mode == "hang":
            doc, stage = int(argv[3]), argv[4]

            def hook(s: str) -> None:
                if s == stage:
                    print(f"at {stage}", flush=True)
                    time.sleep(600)

            mem.fault = hook
            ds.add_episodes(doc_drafts(doc))
            return 3  # the parent kills us before this
        if mode == "loop":
            # Slow each transaction down so a kill at a random moment usually lands inside one.
            mem.fault = lambda s: time.sleep(0.04) if s in {"after_nodes", "after_edges"} else None
            for i in range(int(argv[3])):
                res = ds.add_episodes(doc_drafts(i))
                print(f"{res.status} {i}", flush=True)
            return 0
        if mode == "input":
            kind, path = argv[3], Path(argv[4])
            started = time.perf_counter()
            try:
                if kind == "drafts":
                    res = ds.add_episodes(json.loads(path.read_text(encoding="utf-8")))
                    out = {"status": res.status, **res.counts}
                else:
                    rep = ds.memorize(path, extractor="rules")
                    out = rep.totals()
            except MemflowError as exc:
                out = {"outcome": "rejected", "type": type(exc).__name__, "message": str(exc)}
            else:
                out = {"outcome": "stored", **out}
            out["seconds"] = round(time.perf_counter() - started, 2)
            print(json.dumps(out, ensure_ascii=False), flush=True)
            return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
