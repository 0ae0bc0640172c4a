"""Synthetic memflow stores for the scale benchmark, bulk-loaded with binary COPY.

Shape (benchmarks.md §2): each episode has ~5 facets of ~4 points, cites one chunk per point, and
links ~5 entities drawn from its dataset's pool with a Zipf (power-law) degree, so a few entities
are hubs. Vectors are clustered unit vectors, not embeddings of the texts: an episode lies near one
of ``topics`` shared topic centres, its facets near it, its points near their facet, and edge texts
near the two ends they join. Queries are stored point vectors plus noise, so each has a known
source episode. Rows are written as the superuser (row-level security does not apply) with
foreign-key triggers off (``session_replication_role = replica``): the generator builds
consistent rows, and checking 3-4 M references one by one would dominate the load time.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector.psycopg import register_vector
from psycopg.types.json import Jsonb
from sqlalchemy.dialects import postgresql

from memflow.db.queries import q
from memflow.db.schema import COLLECTIONS
from memflow.ids import canonical_name, text_hash

F32 = npt.NDArray[np.float32]
DIM = 384
ROWS_PER_EPISODE = 62  # measured average of the shape below (embedding rows per episode)
WORDS = tuple(
    (
        "budget launch rollout schema migration latency cache index vendor contract hiring review design payment search mobile billing roadmap incident backup audit pricing onboarding travel hotel flight dinner garden concert project deadline report meeting customer release testing security privacy upgrade dashboard metrics training workshop invoice"
    ).split()
)
_ROLES = ("owner", "reviewer", "mentioned", "decided", "asked", "customer")
_FACET_TYPES = ("topic", "decision", "plan", "risk", "metric")

TABLE_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "document": (("dataset_id", "uuid"), ("id", "uuid"), ("source", "text"), ("title", "text"),
                 ("content_type", "text"), ("content_hash", "text"), ("reference_time", "timestamptz"),
                 ("scope", "jsonb"), ("metadata", "jsonb")),
    "chunk": (("dataset_id", "uuid"), ("id", "uuid"), ("document_id", "uuid"), ("idx", "int4"),
              ("key", "text"), ("text", "text"), ("speaker", "text"), ("ts", "timestamptz")),
    "node": (("dataset_id", "uuid"), ("id", "uuid"), ("kind", "text"), ("name", "text"),
             ("summary", "text"), ("search_text", "text"), ("anchor_text", "text"),
             ("facet_type", "text"), ("canonical_name", "text"), ("entity_type", "text"),
             ("status", "text"), ("time_start", "timestamptz"), ("created_at", "timestamptz")),
    "edge": (("dataset_id", "uuid"), ("id", "uuid"), ("src", "uuid"), ("relationship", "text"),
             ("dst", "uuid"), ("edge_text", "text"), ("text_hash", "bytea"), ("created_at", "timestamptz")),
    "node_chunk": (("dataset_id", "uuid"), ("node_id", "uuid"), ("chunk_id", "uuid")),
    # Provenance: which document supports each node and edge (scopes and filters read it).
    "node_source": (("dataset_id", "uuid"), ("node_id", "uuid"), ("document_id", "uuid")),
    "edge_source": (("dataset_id", "uuid"), ("edge_id", "uuid"), ("document_id", "uuid")),
    **{c.table: ((("dataset_id", "uuid"), ("node_id", "uuid"), ("text_hash", "bytea"),
                  ("text", "text"), ("embedding", "vector")) if c.node_kind else
                 (("dataset_id", "uuid"), ("text_hash", "bytea"), ("text", "text"), ("embedding", "vector")))
       for c in COLLECTIONS},
}  # fmt: skip
LOAD_ORDER = (
    "document",
    "chunk",
    "node",
    "edge",
    "node_chunk",
    "node_source",
    "edge_source",
    *(c.table for c in COLLECTIONS),
)
# Each episode's document belongs to one of USERS users (scope {"user": "u<n % USERS>"}) and
# carries metadata {"bucket": n % USERS}: one user or bucket is ~1 % of a dataset.
USERS = 100
EMBED_TABLES = tuple(c.table for c in COLLECTIONS)


@dataclass(frozen=True)
class DatasetPlan:
    name: str
    id: uuid.UUID
    target_rows: int
    role: str  # "large" | "small" | "other": which ones the benchmark queries


def plan_datasets(total_rows: int, *, small_count: int = 25) -> list[DatasetPlan]:
    """Many datasets in one store: 50 %, 15 %, 10 % and ``small_count`` of 1 % each."""
    fractions = [0.5, 0.15, 0.1] + [0.25 / small_count] * small_count
    out = []
    for i, frac in enumerate(fractions):
        role = "large" if i == 0 else ("small" if i == 3 else "other")
        name = f"bench-{total_rows}-{i:02d}"
        out.append(
            DatasetPlan(
                name, uuid.uuid5(uuid.NAMESPACE_URL, name), max(1, int(total_rows * frac)), role
            )
        )
    return out


def _unit(x: F32) -> F32:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    out: F32 = (x / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


@dataclass
class Batch:
    rows: dict[str, list[tuple[Any, ...]]] = field(
        default_factory=lambda: {t: [] for t in LOAD_ORDER}
    )

    def count(self, table: str) -> int:
        return len(self.rows[table])


@dataclass
class Query:
    dataset: str
    dataset_id: uuid.UUID
    vector: F32
    source_episode: uuid.UUID


class Generator:
    """Deterministic (seeded) rows and queries; one instance per store."""

    def __init__(self, seed: int = 7, topics: int = 512, dim: int = DIM) -> None:
        self.rng = np.random.default_rng(seed)
        self.dim = dim
        self.topics = _unit(self.rng.standard_normal((topics, dim)).astype(np.float32))
        self.base_time = datetime(2025, 1, 1, tzinfo=UTC)
        # A few stored point vectors per dataset, kept to build queries from.
        self.samples: dict[uuid.UUID, list[tuple[F32, uuid.UUID]]] = {}
        self.episode_user: dict[uuid.UUID, str] = {}  # sampled episodes' users

    def noise(self, n: int, scale: float) -> F32:
        raw = self.rng.standard_normal((n, self.dim)) * (scale / np.sqrt(self.dim))
        out: F32 = raw.astype(np.float32)
        return out

    def _words(self, n: int) -> str:
        idx = self.rng.integers(0, len(WORDS), n)
        return " ".join(WORDS[i] for i in idx)

    def dataset_batches(self, plan: DatasetPlan, episodes_per_batch: int = 1000) -> Iterator[Batch]:
        episodes = max(2, round(plan.target_rows / ROWS_PER_EPISODE))
        pool = max(8, episodes // 2)
        zipf: npt.NDArray[np.float64] = 1.0 / np.arange(1, pool + 1, dtype=np.float64) ** 1.1
        weights = zipf / zipf.sum()
        entities: dict[int, tuple[uuid.UUID, str, F32]] = {}
        edge_texts: set[bytes] = set()
        self.samples[plan.id] = []
        done = 0
        while done < episodes:
            batch = Batch()
            for _ in range(min(episodes_per_batch, episodes - done)):
                self._episode(plan, done, batch, entities, edge_texts, weights)
                done += 1
            yield batch

    def _entity(self, ds: uuid.UUID, idx: int, batch: Batch,
                entities: dict[int, tuple[uuid.UUID, str, F32]], created: datetime) -> tuple[uuid.UUID, str, F32]:  # fmt: skip
        found = entities.get(idx)
        if found is not None:
            return found
        name = f"{self._words(2).title()} {idx}"
        eid = uuid.uuid4()
        vec = _unit(self.topics[self.rng.integers(len(self.topics))] + self.noise(1, 0.9)[0])
        batch.rows["node"].append((ds, eid, "Entity", name, None, None, None, None,
                                   canonical_name(name), "thing", None, None, created))  # fmt: skip
        batch.rows["entity_name"].append((ds, eid, text_hash(name), name, vec))
        entities[idx] = (eid, name, vec)
        return entities[idx]

    def _edge(self, ds: uuid.UUID, batch: Batch, edge_texts: set[bytes], src: uuid.UUID,
              rel: str, dst: uuid.UUID, txt: str, vec: F32, created: datetime,
              doc_id: uuid.UUID) -> None:  # fmt: skip
        h = text_hash(txt)
        edge_id = uuid.uuid4()
        batch.rows["edge"].append((ds, edge_id, src, rel, dst, txt, h, created))
        batch.rows["edge_source"].append((ds, edge_id, doc_id))
        if h not in edge_texts:
            edge_texts.add(h)
            batch.rows["edge_text"].append((ds, h, txt, _unit(vec)))

    def _episode(self, plan: DatasetPlan, n: int, batch: Batch,
                 entities: dict[int, tuple[uuid.UUID, str, F32]], edge_texts: set[bytes],
                 weights: npt.NDArray[np.float64]) -> None:  # fmt: skip
        rng, ds, rows = self.rng, plan.id, batch.rows
        created = self.base_time + timedelta(minutes=int(rng.integers(0, 700 * 24 * 60)))
        ep_vec = _unit(self.topics[rng.integers(len(self.topics))] + self.noise(1, 0.9)[0])
        n_facets = int(np.clip(rng.poisson(5), 2, 9))
        f_vecs = _unit(ep_vec + self.noise(n_facets, 0.7))
        a_vecs = _unit(f_vecs + self.noise(n_facets, 0.3))
        ep_id, doc_id = uuid.uuid4(), uuid.uuid4()
        ep_name = f"{self._words(3).capitalize()} {n}"
        summary = f"{ep_name}: {self._words(14)}."
        user = f"u{n % USERS}"
        rows["document"].append((ds, doc_id, f"synth/{n}", ep_name, "dialog", uuid.uuid4().hex,
                                 created, Jsonb({"user": user}), Jsonb({"bucket": n % USERS})))  # fmt: skip
        rows["node_source"].append((ds, ep_id, doc_id))
        rows["node"].append((ds, ep_id, "Episode", ep_name, summary, None, None, None, None, None,
                             "open", created, created))  # fmt: skip
        rows["episode_summary"].append((ds, ep_id, text_hash(summary), summary, ep_vec))
        ent_idx = sorted(set(int(i) for i in rng.choice(len(weights), size=5, p=weights)))
        ents = [self._entity(ds, i, batch, entities, created) for i in ent_idx]
        for eid, ename, evec in ents:
            rows["node_source"].append((ds, eid, doc_id))  # entities are shared across documents
            role = _ROLES[int(rng.integers(len(_ROLES)))]
            self._edge(ds, batch, edge_texts, ep_id, "involves_entity", eid, f"{ename} | {role}",
                       evec + 0.5 * ep_vec, created, doc_id)  # fmt: skip
        chunk_idx = 0
        ep_chunks: list[uuid.UUID] = []
        for fi in range(n_facets):
            fid = uuid.uuid4()
            handle = f"{self._words(3)} {n}.{fi}"
            anchor = f"{handle}: {self._words(20)}"
            rows["node"].append((ds, fid, "Facet", handle, None, handle, anchor,
                                 _FACET_TYPES[fi % len(_FACET_TYPES)], None, None, None, None, created))  # fmt: skip
            rows["node_source"].append((ds, fid, doc_id))
            rows["facet_search_text"].append((ds, fid, text_hash(handle), handle, f_vecs[fi]))
            rows["facet_anchor_text"].append((ds, fid, text_hash(anchor), anchor, a_vecs[fi]))
            self._edge(ds, batch, edge_texts, ep_id, "has_facet", fid, f"{handle}: {anchor[:120]}",
                       ep_vec + f_vecs[fi], created, doc_id)  # fmt: skip
            n_points = int(np.clip(rng.poisson(4), 1, 8))
            p_vecs = _unit(f_vecs[fi] + self.noise(n_points, 0.7))
            for pi in range(n_points):
                pid, cid = uuid.uuid4(), uuid.uuid4()
                ptext = f"Speaker {pi % 2}: {self._words(12)} ({n}.{fi}.{pi})"
                rows["chunk"].append((ds, cid, doc_id, chunk_idx, f"t{chunk_idx}", ptext,
                                      f"Speaker {pi % 2}", created))  # fmt: skip
                chunk_idx += 1
                ep_chunks.append(cid)
                rows["node"].append((ds, pid, "FacetPoint", ptext[:120], None, ptext, None, None,
                                     None, None, None, None, created))  # fmt: skip
                rows["facetpoint_search_text"].append(
                    (ds, pid, text_hash(ptext), ptext, p_vecs[pi])
                )
                rows["node_chunk"].append((ds, pid, cid))
                rows["node_source"].append((ds, pid, doc_id))
                rows["node_chunk"].append((ds, fid, cid))
                self._edge(ds, batch, edge_texts, fid, "has_point", pid, f"{handle} -> {ptext}",
                           f_vecs[fi] + p_vecs[pi], created, doc_id)  # fmt: skip
                if len(self.samples[ds]) < 400 and rng.random() < 0.2:
                    self.samples[ds].append((p_vecs[pi], ep_id))
                    self.episode_user[ep_id] = user
            eid, ename, evec = ents[int(rng.integers(len(ents)))]
            self._edge(ds, batch, edge_texts, fid, "involves_entity", eid,
                       f"{ename} | mentioned (in: {handle[:50]})", evec + f_vecs[fi], created,
                       doc_id)  # fmt: skip
        for cid in ep_chunks:
            rows["node_chunk"].append((ds, ep_id, cid))

    def queries(self, plan: DatasetPlan, n: int, noise: float = 0.6) -> list[Query]:
        pool = self.samples.get(plan.id) or []
        if not pool:
            return []
        picks = self.rng.choice(len(pool), size=n, replace=n > len(pool))
        out = []
        for i in picks:
            vec, ep = pool[int(i)]
            out.append(Query(plan.name, plan.id, _unit(vec + self.noise(1, noise)[0]), ep))
        return out


def copy_batch(conn: psycopg.Connection[Any], batch: Batch) -> dict[str, int]:
    counts: dict[str, int] = {}
    with conn.cursor() as cur:
        for table in LOAD_ORDER:
            rows = batch.rows[table]
            if not rows:
                continue
            cols = TABLE_COLUMNS[table]
            names = ", ".join(c for c, _ in cols)
            with cur.copy(f"COPY memflow.{table} ({names}) FROM STDIN WITH (FORMAT BINARY)") as cp:
                cp.set_types([t for _, t in cols])
                for row in rows:
                    cp.write_row(row)
            counts[table] = len(rows)
    return counts


def secondary_indexes(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """HNSW and GIN indexes of the loaded tables (name, definition): dropped for the load."""
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'memflow' "
        "AND (indexdef LIKE '%USING hnsw%' OR indexdef LIKE '%USING gin%')"
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


@dataclass
class LoadReport:
    rows: dict[str, int] = field(default_factory=dict)
    load_s: float = 0.0
    index_s: dict[str, float] = field(default_factory=dict)
    vacuum_s: float = 0.0
    datasets: list[dict[str, Any]] = field(default_factory=list)

    @property
    def embedding_rows(self) -> int:
        return sum(self.rows.get(t, 0) for t in EMBED_TABLES)


def load_store(libpq: str, gen: Generator, plans: list[DatasetPlan], *,
               maintenance_work_mem: str = "1GB", workers: int = 1) -> LoadReport:  # fmt: skip
    """Create the datasets, COPY their rows, rebuild the dropped indexes, VACUUM ANALYZE."""
    report = LoadReport()
    with psycopg.connect(libpq, autocommit=True) as conn:
        register_vector(conn)
        indexes = secondary_indexes(conn)
        for name, _ in indexes:
            conn.execute(f"DROP INDEX memflow.{name}")
        started = time.perf_counter()
        # Without superuser rights foreign keys are checked row by row (slower, same result).
        with contextlib.suppress(psycopg.Error):
            conn.execute("SET session_replication_role = replica")
        for plan in plans:
            conn.execute(
                "INSERT INTO memflow.dataset (id, name) VALUES (%s, %s)", (plan.id, plan.name)
            )
            ds_rows = 0
            for batch in gen.dataset_batches(plan):
                with conn.transaction():
                    for table, n in copy_batch(conn, batch).items():
                        report.rows[table] = report.rows.get(table, 0) + n
                        if table in EMBED_TABLES:
                            ds_rows += n
            report.datasets.append(
                {"name": plan.name, "role": plan.role, "embedding_rows": ds_rows}
            )
        conn.execute("SET session_replication_role = DEFAULT")
        report.load_s = round(time.perf_counter() - started, 2)
        conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
        conn.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
        for name, ddl in indexes:
            t = time.perf_counter()
            conn.execute(ddl)
            report.index_s[name] = round(time.perf_counter() - t, 2)
        # What the write path stores beside the rows COPY wrote: the nodes' citations (0008).
        dialect = postgresql.psycopg.dialect()
        cited = str(q("node_citations_of_dataset").compile(dialect=dialect))
        refresh = str(q("node_citations_refresh").compile(dialect=dialect))
        for plan in plans:
            ids = [r[0] for r in conn.execute(cited, {"dataset_id": plan.id}).fetchall()]
            conn.execute(refresh, {"dataset_id": plan.id, "ids": ids})
        t = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) memflow.node, memflow.edge, memflow.node_chunk, memflow.chunk, "
                     "memflow.document, memflow.node_source, memflow.edge_source, "
                     + ", ".join(f"memflow.{t}" for t in EMBED_TABLES))  # fmt: skip
        report.vacuum_s = round(time.perf_counter() - t, 2)
    return report
