-- The write path: one transaction per document, upserts on deterministic ids.

-- name: document_get
SELECT id, source, content_type, created_at FROM memflow.document
WHERE dataset_id = :dataset_id AND id = :id;

-- name: document_episodes
-- The episodes a stored document supports (a skipped document's report lists them).
SELECT s.node_id FROM memflow.node_source s
JOIN memflow.node n ON n.dataset_id = s.dataset_id AND n.id = s.node_id AND n.kind = 'Episode'
WHERE s.dataset_id = :dataset_id AND s.document_id = :id
ORDER BY n.created_at, s.node_id;

-- name: document_insert
INSERT INTO memflow.document (dataset_id, id, source, title, content_type, content_hash, reference_time, meta,
                              scope, metadata)
VALUES (:dataset_id, :id, :source, :title, :content_type, :content_hash, :reference_time, CAST(:meta AS jsonb),
        CAST(:scope AS jsonb), CAST(:metadata AS jsonb));

-- name: chunk_insert
INSERT INTO memflow.chunk (dataset_id, id, document_id, idx, key, text, speaker, ts)
VALUES (:dataset_id, :id, :document_id, :idx, :key, :text, :speaker, :ts)
ON CONFLICT (dataset_id, id) DO NOTHING;

-- name: node_upsert
-- Ids are derived from content, so an existing row already holds this content: keep it untouched
-- (forgetting a later document then restores every table exactly). Merges update explicitly.
-- No conflict target: an entity's canonical name is a second unique key, and two writers racing
-- on one entity may meet on it first; either key means "already there".
INSERT INTO memflow.node (dataset_id, id, kind, name, summary, search_text, anchor_text, description,
                          facet_type, canonical_name, entity_type, memory_type, status,
                          time_start, time_end, time_confidence, time_text, valid_at, recorded_at,
                          props)
VALUES (:dataset_id, :id, :kind, :name, :summary, :search_text, :anchor_text, :description,
        :facet_type, :canonical_name, :entity_type, :memory_type, :status,
        :time_start, :time_end, :time_confidence, :time_text,
        coalesce(CAST(:valid_at AS timestamptz), now()), coalesce(CAST(:recorded_at AS timestamptz), now()),
        CAST(:props AS jsonb))
ON CONFLICT DO NOTHING;

-- name: edge_upsert
-- No conflict target, as for nodes: (src, relationship, dst) is a second unique key.
INSERT INTO memflow.edge (dataset_id, id, src, relationship, dst, edge_text, text_hash, recorded_at)
VALUES (:dataset_id, :id, :src, :relationship, :dst, :edge_text, :text_hash,
        coalesce(CAST(:recorded_at AS timestamptz), now()))
ON CONFLICT DO NOTHING;

-- name: node_source_insert
INSERT INTO memflow.node_source (dataset_id, node_id, document_id)
VALUES (:dataset_id, :node_id, :document_id)
ON CONFLICT DO NOTHING;

-- name: edge_source_insert
INSERT INTO memflow.edge_source (dataset_id, edge_id, document_id)
VALUES (:dataset_id, :edge_id, :document_id)
ON CONFLICT DO NOTHING;

-- name: node_chunk_insert
INSERT INTO memflow.node_chunk (dataset_id, node_id, chunk_id)
VALUES (:dataset_id, :node_id, :chunk_id)
ON CONFLICT DO NOTHING;

-- name: embedded_hashes
-- Which texts of this dataset are already embedded (any collection): the embedding cache.
SELECT text_hash, embedding FROM memflow.episode_summary WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes)
UNION ALL SELECT text_hash, embedding FROM memflow.facet_search_text WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes)
UNION ALL SELECT text_hash, embedding FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes)
UNION ALL SELECT text_hash, embedding FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes)
UNION ALL SELECT text_hash, embedding FROM memflow.entity_name WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes)
UNION ALL SELECT text_hash, embedding FROM memflow.edge_text WHERE dataset_id = :dataset_id AND text_hash = ANY(:hashes);

-- name: embed_upsert_episode_summary
INSERT INTO memflow.episode_summary AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_facet_search_text
INSERT INTO memflow.facet_search_text AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_facet_anchor_text
INSERT INTO memflow.facet_anchor_text AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_facetpoint_search_text
INSERT INTO memflow.facetpoint_search_text AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_entity_name
INSERT INTO memflow.entity_name AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_procedure_summary
INSERT INTO memflow.procedure_summary AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_procedure_step_text
INSERT INTO memflow.procedure_step_text AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_procedure_context_text
INSERT INTO memflow.procedure_context_text AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_entitytype_name
INSERT INTO memflow.entitytype_name AS t (dataset_id, node_id, text_hash, text, embedding)
VALUES (:dataset_id, :node_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, node_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, text = EXCLUDED.text,
  embedding = EXCLUDED.embedding WHERE t.text_hash <> EXCLUDED.text_hash;

-- name: embed_upsert_edge_text
INSERT INTO memflow.edge_text (dataset_id, text_hash, text, embedding)
VALUES (:dataset_id, :text_hash, :text, :embedding)
ON CONFLICT (dataset_id, text_hash) DO NOTHING;

-- name: graph_estimate
-- How many nodes the planner believes the store holds (-1: never analyzed), whether this role
-- may refresh the statistics (ANALYZE needs the owner or, from PostgreSQL 17, MAINTAIN), and
-- the transaction's lock timeout (to restore).
SELECT c.reltuples AS estimate,
       CASE WHEN pg_has_role(c.relowner, 'USAGE') THEN true
            WHEN current_setting('server_version_num')::int >= 170000
              THEN has_table_privilege(c.oid, 'MAINTAIN')
            ELSE false END AS may_analyze,
       current_setting('lock_timeout') AS lock_timeout
FROM pg_class c WHERE c.oid = 'memflow.node'::regclass;

-- name: dataset_plan_rows
-- How many nodes the planner believes dataset :dataset_id holds (the row estimate of its plan):
-- a dataset new to a large store is believed nearly empty whatever the store's size.
EXPLAIN (FORMAT JSON) SELECT 1 FROM memflow.node WHERE dataset_id = :dataset_id;

-- name: dataset_nodes
SELECT count(*) AS n FROM memflow.node WHERE dataset_id = :dataset_id;

-- name: set_lock_timeout
SELECT set_config('lock_timeout', :timeout, true);

-- name: analyze_written
-- The statistics of the tables the statements after a write read (supersession, versions,
-- merges), taken inside the write's transaction: its own new rows are counted.
ANALYZE memflow.node, memflow.node_chunk, memflow.chunk, memflow.edge, memflow.node_source,
  memflow.edge_source, memflow.facetpoint_search_text;

-- name: node_citations_refresh
-- What search reads of a node's provenance, stored on the node (revision 0008): its citations,
-- [chunk key, document id, document source, chunk ts] per cited chunk in chunk order, and its
-- first chunk's speaker; both NULL when it cites no chunk any more. Run for the nodes whose
-- citations a statement changed (:ids). Entities are left out: search reads no provenance of theirs.
UPDATE memflow.node n
   SET (citations, speaker) = (
         SELECT jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts)
                          ORDER BY c.idx, c.id),
                (array_agg(c.speaker ORDER BY c.idx, c.id))[1]
           FROM memflow.node_chunk nc
           JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
           JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
          WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id)
 WHERE n.dataset_id = :dataset_id
   AND n.id = ANY(CAST(:ids AS uuid[]))
   AND n.kind IN ('Episode', 'Facet', 'FacetPoint');

-- name: node_citations_of_documents
-- The nodes citing a chunk of the documents (:document_ids): their stored citations change when
-- the documents' chunks go.
SELECT DISTINCT nc.node_id
  FROM memflow.chunk c
  JOIN memflow.node_chunk nc ON nc.dataset_id = c.dataset_id AND nc.chunk_id = c.id
 WHERE c.dataset_id = :dataset_id AND c.document_id = ANY(CAST(:document_ids AS uuid[]))
 ORDER BY nc.node_id;

-- name: node_citations_of_dataset
-- Every node of the dataset citing a chunk (an import refreshes them all).
SELECT DISTINCT node_id FROM memflow.node_chunk WHERE dataset_id = :dataset_id ORDER BY node_id;
