"""False supersessions of the rules path, measured offline on a stored dataset (LoCoMo).

Every dataset's FacetPoints are replayed in the order they were said (chunk time, then position)
through :func:`memflow.text.supersede.superseded_by_rules`, each new point against *every*
earlier point still current of its dataset (an upper bound: the write path only looks at the
same speaker's points and the nearest neighbours). LoCoMo conversations are people chatting over
months; the facts in them rarely change, so what the rule supersedes there is mostly false.

Reads the store as its owner without upgrading it: run it on a copy of a store that other code
may not migrate (``cp -a ~/.cache/memflow-locomo /work/locomo-copy``).

    python -m benchmarks.supersede_replay --home /work/locomo-copy --sample 40
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg

from memflow.config import libpq_url
from memflow.db.embedded import EmbeddedServer
from memflow.text.supersede import PointFact, superseded_by_rules

POINTS = """
SELECT d.name AS dataset, n.id, n.search_text AS text, c.speaker, c.ts, doc.reference_time,
       c.idx, c.document_id
FROM memflow.node n
JOIN memflow.dataset d ON d.id = n.dataset_id
LEFT JOIN LATERAL (
  SELECT ch.speaker, ch.ts, ch.idx, ch.document_id FROM memflow.node_chunk nc
  JOIN memflow.chunk ch ON ch.dataset_id = nc.dataset_id AND ch.id = nc.chunk_id
  WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id ORDER BY ch.idx LIMIT 1) c ON true
LEFT JOIN memflow.document doc ON doc.dataset_id = n.dataset_id AND doc.id = c.document_id
WHERE n.kind = 'FacetPoint'
"""


def replay(rows: list[dict[str, Any]]) -> tuple[int, list[dict[str, str]]]:
    """(points, supersessions with their texts) of one dataset's points."""
    rows.sort(
        key=lambda r: (
            r["ts"] or r["reference_time"] or r["idx"] * 0,
            str(r["document_id"]),
            r["idx"] or 0,
        )
    )
    current: dict[uuid.UUID, PointFact] = {}
    texts: dict[uuid.UUID, str] = {}
    found: list[dict[str, str]] = []
    for r in rows:
        fact = PointFact(r["id"], r["text"] or "", r["speaker"], r["ts"] or r["reference_time"])
        texts[fact.id] = fact.text
        for s in superseded_by_rules(fact, list(current.values())):
            current.pop(s.old, None)
            found.append(
                {"old": texts[s.old], "new": fact.text, "rule": s.rule, "change": s.detail}
            )
        current[fact.id] = fact
    return len(rows), found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, required=True, help="embedded server home (a copy)")
    ap.add_argument("--prefix", default="locomo-", help="datasets whose name starts with this")
    ap.add_argument("--sample", type=int, default=30, help="supersessions to print")
    ap.add_argument("--out", type=Path, help="write the figures and every supersession (JSON)")
    args = ap.parse_args(argv)
    server = EmbeddedServer(args.home)
    server.start()
    try:
        with psycopg.connect(libpq_url(server.url())) as conn:
            cur = conn.execute(POINTS)
            cols = [c.name for c in cur.description or []]
            by_ds: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for row in cur.fetchall():
                rec = dict(zip(cols, row, strict=True))
                if rec["dataset"].startswith(args.prefix):
                    by_ds[rec["dataset"]].append(rec)
    finally:
        server.stop()
    total, found = 0, []
    per: dict[str, dict[str, int]] = {}
    for name in sorted(by_ds):
        n, sup = replay(by_ds[name])
        total += n
        found += sup
        per[name] = {"points": n, "superseded": len(sup)}
    rate = len(found) / total if total else 0.0
    print(f"{len(by_ds)} datasets, {total} points, {len(found)} superseded ({rate:.2%})")
    for name, c in per.items():
        print(f"  {name}: {c['superseded']}/{c['points']}")
    for s in random.Random(0).sample(found, min(args.sample, len(found))):
        print(
            f"- [{s['rule']}: {s['change']}]\n    old: {s['old'][:140]}\n    new: {s['new'][:140]}"
        )
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "points": total,
                    "superseded": len(found),
                    "rate": rate,
                    "datasets": per,
                    "supersessions": found,
                },
                ensure_ascii=False,
                indent=1,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
