-- Datasets (tenants) and counts. Parameters are :name style (psql variables / SQLAlchemy).

-- name: dataset_get
SELECT id, name, created_at, meta->>'embedder' AS embedder FROM memflow.dataset WHERE name = :name;

-- name: dataset_create
-- The embedder is recorded with the dataset: vectors of two models must never be mixed.
INSERT INTO memflow.dataset (id, name, meta) VALUES (:id, :name, jsonb_build_object('embedder', CAST(:embedder AS text)))
ON CONFLICT (name) DO NOTHING;

-- name: dataset_set_embedder
UPDATE memflow.dataset SET meta = meta || jsonb_build_object('embedder', CAST(:embedder AS text))
WHERE id = :dataset_id AND NOT meta ? 'embedder';

-- name: dataset_list
SELECT id, name, created_at, meta->>'embedder' AS embedder FROM memflow.dataset ORDER BY name;

-- name: dataset_counts
SELECT (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id AND kind = 'Episode') AS episodes,
       (SELECT count(*) FROM memflow.document WHERE dataset_id = :dataset_id) AS documents;

-- name: dataset_drop
DELETE FROM memflow.dataset WHERE id = :dataset_id;

-- name: dataset_stats
SELECT
  (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id AND kind = 'Episode') AS episodes,
  (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id AND kind = 'Facet') AS facets,
  (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id AND kind = 'FacetPoint') AS facet_points,
  (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id AND kind = 'Entity') AS entities,
  (SELECT count(*) FROM memflow.edge WHERE dataset_id = :dataset_id) AS edges,
  (SELECT count(*) FROM memflow.document WHERE dataset_id = :dataset_id) AS documents,
  (SELECT count(*) FROM memflow.chunk WHERE dataset_id = :dataset_id) AS chunks,
  (SELECT count(*) FROM memflow.edge_text WHERE dataset_id = :dataset_id)
  + (SELECT count(*) FROM memflow.episode_summary WHERE dataset_id = :dataset_id)
  + (SELECT count(*) FROM memflow.facet_search_text WHERE dataset_id = :dataset_id)
  + (SELECT count(*) FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id)
  + (SELECT count(*) FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id)
  + (SELECT count(*) FROM memflow.entity_name WHERE dataset_id = :dataset_id) AS embeddings;

-- name: episode_tree
-- The rows of one episode as `memflow show` prints them.
SELECT tree, edge_text, depth, kind
FROM memflow.episode_tree
WHERE dataset_id = :dataset_id AND episode_id = :episode_id;

-- name: chunk_get
-- One message or section of a stored document, by the document id and chunk key a search cites.
SELECT c.document_id, d.source, c.key, c.idx, c.text, c.speaker, c.ts
FROM memflow.chunk c
JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
WHERE c.dataset_id = :dataset_id AND c.document_id = :document_id AND c.key = :key
ORDER BY c.idx
LIMIT 1;

-- name: episode_list
SELECT id, name, time_start, created_at
FROM memflow.node
WHERE dataset_id = :dataset_id AND kind = 'Episode'
ORDER BY coalesce(time_start, created_at), name
LIMIT :limit;

-- name: grant_reader
-- Let a role read one dataset in psql (memflow db grant-reader); the function is in revision 0003.
SELECT memflow.grant_reader(:dataset, :role) AS dataset_id;
