-- Routing: does a new episode continue an existing one? And the reads and updates a merge needs.
-- Every statement is scoped by :dataset_id (and by row-level security).

-- name: route_bind
-- Filtered HNSW scans keep going until enough rows of this dataset are found (pgvector >= 0.8).
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', :ef_search, true);

-- name: route_candidates
-- The k episodes whose summary is nearest to the new episode's summary, with their time span and
-- how many of the given entities each already involves (through the episode or one of its facets).
WITH near AS (
  SELECT s.node_id, 1 - (s.embedding <=> CAST(:embedding AS vector)) AS similarity
  FROM memflow.episode_summary s
  WHERE s.dataset_id = :dataset_id
  ORDER BY s.embedding <=> CAST(:embedding AS vector)
  LIMIT :k
)
SELECT n.id, n.name, n.summary, near.similarity, n.time_start, n.time_end,
       (SELECT count(DISTINCT ie.dst)
          FROM memflow.edge ie
         WHERE ie.dataset_id = :dataset_id
           AND ie.relationship = 'involves_entity'
           AND ie.dst = ANY(:entity_ids)
           AND (ie.src = n.id
                OR ie.src IN (SELECT hf.dst FROM memflow.edge hf
                               WHERE hf.dataset_id = :dataset_id AND hf.src = n.id
                                 AND hf.relationship = 'has_facet'))) AS shared_entities
FROM near
JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = near.node_id AND n.kind = 'Episode'
ORDER BY near.similarity DESC, n.id;

-- name: route_episode_state
-- Episodes a merge or a forget re-derives, with the current summary embedding.
SELECT n.id, n.name, n.summary, n.props, n.updated_at, s.embedding
FROM memflow.node n
LEFT JOIN memflow.episode_summary s ON s.dataset_id = n.dataset_id AND s.node_id = n.id
WHERE n.dataset_id = :dataset_id AND n.id = ANY(:ids) AND n.kind = 'Episode';

-- name: route_episode_facets
-- The facets of the given episodes in a stable reading order: older facets first, then by the
-- position of their first source chunk in its document, then by id.
SELECT hf.src AS episode_id, f.id, f.name, f.search_text, f.anchor_text, f.props, f.updated_at,
       f.created_at, a.embedding,
       (SELECT min(c.idx) FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
         WHERE nc.dataset_id = f.dataset_id AND nc.node_id = f.id) AS first_chunk
FROM memflow.edge hf
JOIN memflow.node f ON f.dataset_id = hf.dataset_id AND f.id = hf.dst
LEFT JOIN memflow.facet_anchor_text a ON a.dataset_id = f.dataset_id AND a.node_id = f.id
WHERE hf.dataset_id = :dataset_id AND hf.src = ANY(:ids) AND hf.relationship = 'has_facet'
ORDER BY hf.src, f.created_at, first_chunk NULLS LAST, f.id;

-- name: route_existing_nodes
-- Which planned nodes already exist: their stored texts win (nodes are content-addressed).
SELECT id, kind, name, summary, search_text, anchor_text
FROM memflow.node
WHERE dataset_id = :dataset_id AND id = ANY(:ids);

-- name: route_existing_edges
SELECT id, edge_text
FROM memflow.edge
WHERE dataset_id = :dataset_id AND id = ANY(:ids);

-- name: route_lock_nodes
-- Inside the write transaction: the merge targets, locked, to detect a concurrent merge.
SELECT id, updated_at
FROM memflow.node
WHERE dataset_id = :dataset_id AND id = ANY(:ids)
ORDER BY id
FOR UPDATE;

-- name: route_update_summary
-- An episode re-summarised by a merge (or restored by a forget). NULL :updated_at means now().
UPDATE memflow.node
SET summary = :text, props = CAST(:props AS jsonb),
    updated_at = coalesce(CAST(:updated_at AS timestamptz), now())
WHERE dataset_id = :dataset_id AND id = :id AND kind = 'Episode';

-- name: route_update_anchor
-- A facet that absorbed the text of a merged facet (or is restored by a forget).
UPDATE memflow.node
SET anchor_text = :text, props = CAST(:props AS jsonb),
    updated_at = coalesce(CAST(:updated_at AS timestamptz), now())
WHERE dataset_id = :dataset_id AND id = :id AND kind = 'Facet';

-- name: route_set_summary_embedding
UPDATE memflow.episode_summary
SET text = :text, text_hash = :text_hash, embedding = :embedding
WHERE dataset_id = :dataset_id AND node_id = :id;

-- name: route_set_anchor_embedding
UPDATE memflow.facet_anchor_text
SET text = :text, text_hash = :text_hash, embedding = :embedding
WHERE dataset_id = :dataset_id AND node_id = :id;
