-- Search. Every statement is scoped by :dataset_id (and by row-level security).

-- name: bind_search
-- The one setup statement of a search transaction: bind the dataset (RLS) and let filtered HNSW
-- scans continue until LIMIT rows of this dataset are found (pgvector >= 0.8 iterative scan).
SELECT set_config('memflow.dataset_id', :dataset_id, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', :ef_search, true);

-- name: recall
-- Wide vector recall: the :k nearest rows of every per-field embedding table, in one round trip.
-- Each branch orders by the distance to the same query vector so the HNSW index is used.
(SELECT 'Episode_summary' AS collection, node_id, NULL::bytea AS text_hash, text,
        embedding <=> CAST(:q AS vector) AS distance
   FROM memflow.episode_summary WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
UNION ALL
(SELECT 'Facet_search_text', node_id, NULL, text, embedding <=> CAST(:q AS vector)
   FROM memflow.facet_search_text WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
UNION ALL
(SELECT 'Facet_anchor_text', node_id, NULL, text, embedding <=> CAST(:q AS vector)
   FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
UNION ALL
(SELECT 'FacetPoint_search_text', node_id, NULL, text, embedding <=> CAST(:q AS vector)
   FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
UNION ALL
(SELECT 'Entity_name', node_id, NULL, text, embedding <=> CAST(:q AS vector)
   FROM memflow.entity_name WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
UNION ALL
(SELECT 'Edge_text', NULL, text_hash, text, embedding <=> CAST(:q AS vector)
   FROM memflow.edge_text WHERE dataset_id = :dataset_id
  ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k);

-- name: project
-- Graph projection: every node within 2 hops of the hit ids (:ids, best first), inside the
-- dataset. Hub guard: each node contributes at most :fanout neighbours, hits first, then newest.
-- Nodes are capped at :max_nodes, Episodes first, then Facets, FacetPoints, Entities, then by
-- hit rank. Returns node rows and then the edges among the kept nodes (row_type 'node'|'edge').
WITH RECURSIVE
seed AS (
  SELECT id, ord FROM unnest(CAST(:ids AS uuid[])) WITH ORDINALITY AS s(id, ord)
),
walk(node_id, depth) AS (
  SELECT id, 0 FROM seed
  UNION
  SELECT nb.other, w.depth + 1
  FROM walk w
  CROSS JOIN LATERAL (
    SELECT x.other FROM (
      SELECT e.dst AS other, e.created_at FROM memflow.edge e
       WHERE e.dataset_id = :dataset_id AND e.src = w.node_id
      UNION ALL
      SELECT e.src, e.created_at FROM memflow.edge e
       WHERE e.dataset_id = :dataset_id AND e.dst = w.node_id
    ) x
    ORDER BY (x.other = ANY(CAST(:ids AS uuid[]))) DESC, x.created_at DESC, x.other
    LIMIT :fanout
  ) nb
  WHERE w.depth < 2
),
reached AS (
  SELECT node_id, min(depth) AS depth FROM walk GROUP BY node_id
),
kept AS (
  SELECT n.*, r.depth, s.ord
  FROM reached r
  JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = r.node_id
  LEFT JOIN seed s ON s.id = r.node_id
  ORDER BY CASE n.kind WHEN 'Episode' THEN 0 WHEN 'Facet' THEN 1 WHEN 'FacetPoint' THEN 2 ELSE 3 END,
           s.ord NULLS LAST, r.depth, n.id
  LIMIT :max_nodes
)
SELECT 'node' AS row_type, k.id, k.kind, k.name, k.summary, k.search_text, k.anchor_text,
       k.description, k.facet_type, k.created_at, k.time_start, k.time_end, k.display_only,
       ARRAY(SELECT c.key FROM memflow.node_chunk nc
               JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
              WHERE nc.dataset_id = :dataset_id AND nc.node_id = k.id
              ORDER BY c.idx LIMIT 64) AS sources,
       CASE WHEN k.kind = 'Entity' THEN
         (SELECT count(*) FROM (SELECT 1 FROM memflow.edge e
                                 WHERE e.dataset_id = :dataset_id AND e.dst = k.id
                                 LIMIT :fanout + 1) d) > :fanout
       END AS hub,
       NULL::uuid AS src, NULL::text AS relationship, NULL::uuid AS dst, NULL::text AS edge_text
FROM kept k
UNION ALL
SELECT 'edge', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       e.src, e.relationship, e.dst, e.edge_text
FROM memflow.edge e
WHERE e.dataset_id = :dataset_id
  AND e.src IN (SELECT id FROM kept) AND e.dst IN (SELECT id FROM kept);

-- name: vector_units
-- Baseline: plain ANN over FacetPoint and Facet texts, each unit with its episode.
WITH hits AS (
  (SELECT 'FacetPoint_search_text' AS collection, node_id, text, embedding <=> CAST(:q AS vector) AS distance
     FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id
    ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
  UNION ALL
  (SELECT 'Facet_anchor_text', node_id, text, embedding <=> CAST(:q AS vector)
     FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id AND :include_facets
    ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
)
SELECT h.collection, h.node_id, h.text, h.distance, ep.id AS episode_id, ep.name AS episode_name,
       ep.time_start, ep.created_at,
       ARRAY(SELECT c.key FROM memflow.node_chunk nc
               JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
              WHERE nc.dataset_id = :dataset_id AND nc.node_id = h.node_id ORDER BY c.idx) AS sources
FROM hits h
LEFT JOIN LATERAL (
  SELECT n.id, n.name, n.time_start, n.created_at
  FROM memflow.edge hp
  JOIN memflow.edge hf ON hf.dataset_id = hp.dataset_id AND hf.relationship = 'has_facet'
                      AND hf.dst = CASE WHEN h.collection = 'Facet_anchor_text' THEN h.node_id ELSE hp.src END
  JOIN memflow.node n ON n.dataset_id = hf.dataset_id AND n.id = hf.src
  WHERE hp.dataset_id = :dataset_id
    AND ((h.collection = 'FacetPoint_search_text' AND hp.relationship = 'has_point' AND hp.dst = h.node_id)
      OR (h.collection = 'Facet_anchor_text' AND hp.relationship = 'has_facet' AND hp.dst = h.node_id))
  ORDER BY n.id LIMIT 1
) ep ON true
ORDER BY h.distance, h.node_id
LIMIT :k;

-- name: lexical_units
-- Postgres full-text search over chunks ('simple' config: any language), with trigram
-- similarity for scripts without spaces (CJK); each chunk with the episode it supports.
WITH q AS (
  SELECT to_tsquery('simple', :tsquery) AS tsq
),
hits AS (
  SELECT c.id, c.key, c.idx, c.text,
         greatest(ts_rank_cd(c.tsv, q.tsq, 32), CASE WHEN :trigram THEN similarity(c.text, :raw) ELSE 0 END) AS rank
  FROM memflow.chunk c, q
  WHERE c.dataset_id = :dataset_id
    AND (c.tsv @@ q.tsq OR (:trigram AND c.text % :raw))
  ORDER BY rank DESC, c.id
  LIMIT :k
)
SELECT h.id AS chunk_id, h.key, h.text, h.rank, ep.id AS episode_id, ep.name AS episode_name,
       ep.time_start, ep.created_at, pt.id AS point_id
FROM hits h
LEFT JOIN LATERAL (
  SELECT n.id, n.name, n.time_start, n.created_at
  FROM memflow.node_chunk nc JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id
  WHERE nc.dataset_id = :dataset_id AND nc.chunk_id = h.id AND n.kind = 'Episode'
  ORDER BY n.id LIMIT 1
) ep ON true
LEFT JOIN LATERAL (
  SELECT n.id FROM memflow.node_chunk nc JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id
  WHERE nc.dataset_id = :dataset_id AND nc.chunk_id = h.id AND n.kind = 'FacetPoint'
  ORDER BY n.id LIMIT 1
) pt ON true
ORDER BY h.rank DESC, h.id;
