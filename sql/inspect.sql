-- What the web view (`memflow ui`, memflow/ui/) reads beyond the Dataset API.

-- name: episode_graph
-- One episode as a tree: the episode (depth 0), what it links to (depth 1: facets, entities,
-- procedures), and what those facets and procedures link to (depth 2: points, entities, steps).
-- Each row is one edge (parent_id, relationship, edge_text; none for the episode) and the node
-- it reaches, with its validity (valid_at; recorded_at, the source's date; created_at, when
-- memflow wrote it; invalid_at, superseded_by and the text of what replaced it; supersedes: it
-- replaced an earlier version) and, for episodes, facets and points, its citations: [chunk key,
-- document id, document source, chunk ts] per chunk, first chunk first, at most :max_citations.
-- No row: no such episode in the dataset.
WITH ep AS (
  SELECT id FROM memflow.node
   WHERE dataset_id = :dataset_id AND id = :episode_id AND kind = 'Episode'
), first_level AS (
  SELECT e.src, e.relationship, e.edge_text, e.invalid_at AS edge_invalid_at, e.dst, 1 AS depth
    FROM memflow.edge e JOIN ep ON e.src = ep.id
   WHERE e.dataset_id = :dataset_id
), second_level AS (
  SELECT e.src, e.relationship, e.edge_text, e.invalid_at, e.dst, 2
    FROM memflow.edge e
    JOIN first_level f ON e.src = f.dst AND f.relationship IN ('has_facet', 'has_procedure')
   WHERE e.dataset_id = :dataset_id
), links AS (
  SELECT NULL::uuid AS src, NULL::text AS relationship, NULL::text AS edge_text,
         NULL::timestamptz AS edge_invalid_at, id AS dst, 0 AS depth
    FROM ep
  UNION ALL SELECT * FROM first_level
  UNION ALL SELECT * FROM second_level
)
SELECT l.src AS parent_id, l.relationship, l.edge_text, l.edge_invalid_at, l.depth,
       n.id, n.kind, n.name, n.summary, n.search_text, n.anchor_text, n.description,
       n.facet_type, n.time_start, n.time_end, n.valid_at, n.recorded_at, n.created_at, n.invalid_at,
       n.superseded_by, coalesce(s.search_text, s.name) AS superseded_by_text,
       EXISTS (SELECT 1 FROM memflow.node o
                WHERE o.dataset_id = n.dataset_id AND o.superseded_by = n.id) AS supersedes,
       (n.props->>'position')::int AS position,
       coalesce(src.citations, '[]'::jsonb) AS citations, src.first_idx
FROM links l
JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = l.dst
LEFT JOIN memflow.node s ON s.dataset_id = n.dataset_id AND s.id = n.superseded_by
LEFT JOIN LATERAL (
  SELECT jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts)
                   ORDER BY d.created_at, c.idx) AS citations,
         min(c.idx) AS first_idx
  FROM (SELECT c.key, c.idx, c.document_id, c.ts
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
         WHERE nc.dataset_id = :dataset_id AND nc.node_id = n.id AND n.kind <> 'Entity'
         ORDER BY c.idx LIMIT :max_citations) c
  JOIN memflow.document d ON d.dataset_id = :dataset_id AND d.id = c.document_id
) src ON true
ORDER BY l.depth, position NULLS LAST, src.first_idx NULLS LAST,
         coalesce(n.search_text, n.name), n.id;
