-- Export and import of a dataset as a dump (docs/export.md; memflow.store.export, .imports,
-- .rekey). Both stream: an export reads each table through one cursor (memflow_dump) in batches
-- of FETCH; an import stages the dump's records in temporary tables, checks them, re-derives the
-- ids for the new dataset and writes everything with INSERT ... SELECT, all in one transaction.

-- name: dump_fetch
FETCH FORWARD 500 FROM memflow_dump;

-- name: dump_close
CLOSE memflow_dump;

-- ------------------------------------------------------------------------------------- export

-- name: export_snapshot
-- An export's first statement: every cursor reads the same snapshot, and nothing is written.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;

-- name: export_utc
-- Times in the dump are written in UTC (each with its offset, +00:00).
SET LOCAL TimeZone = 'UTC';

-- name: export_header
SELECT d.id, d.name, d.created_at, d.meta ->> 'embedder' AS embedder,
       (SELECT CAST(value AS integer) FROM memflow.store_meta WHERE key = 'embedding_dim') AS dim,
       (SELECT version_num FROM memflow.alembic_version LIMIT 1) AS revision
FROM memflow.dataset d WHERE d.id = :dataset_id;

-- name: export_counts
SELECT (SELECT count(*) FROM memflow.document WHERE dataset_id = :dataset_id) AS document,
       (SELECT count(*) FROM memflow.chunk WHERE dataset_id = :dataset_id) AS chunk,
       (SELECT count(*) FROM memflow.node WHERE dataset_id = :dataset_id) AS node,
       (SELECT count(*) FROM memflow.edge WHERE dataset_id = :dataset_id) AS edge,
       (SELECT count(*) FROM memflow.node_source WHERE dataset_id = :dataset_id) AS node_source,
       (SELECT count(*) FROM memflow.edge_source WHERE dataset_id = :dataset_id) AS edge_source,
       (SELECT count(*) FROM memflow.node_chunk WHERE dataset_id = :dataset_id) AS node_chunk,
       (SELECT count(*) FROM memflow.change_log WHERE dataset_id = :dataset_id) AS change_log,
       (SELECT count(*) FROM memflow.episode_summary WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.facet_search_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.entity_name WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.edge_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.procedure_summary WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.procedure_step_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.procedure_context_text WHERE dataset_id = :dataset_id)
       + (SELECT count(*) FROM memflow.entitytype_name WHERE dataset_id = :dataset_id) AS vector;

-- The records of each table: every column by name (to_jsonb of the row) but dataset_id and the
-- generated tsv, plus the record type; rows in storage order (an import writes them in the same
-- order). bytea is written as hex.

-- name: export_document
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id') || '{"type": "document"}')::text AS line
FROM memflow.document t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_chunk
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id' - 'tsv') || '{"type": "chunk"}')::text AS line
FROM memflow.chunk t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_node
-- A node's stored citations (revision 0008) are left out: import derives them again.
-- Without vectors, a merge record's base embedding (props.merge.base.vector) is left out too:
-- forget embeds the base text again when it needs it.
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id' - 'tsv' - 'citations' - 'speaker')
        || jsonb_build_object('type', 'node', 'props',
             CASE WHEN NOT :with_vectors AND jsonb_typeof(t.props #> '{merge,base}') = 'object'
                  THEN jsonb_set(t.props, '{merge,base,vector}', 'null') ELSE t.props END))::text AS line
FROM memflow.node t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_edge
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id')
        || jsonb_build_object('type', 'edge', 'text_hash', encode(t.text_hash, 'hex')))::text AS line
FROM memflow.edge t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_node_source
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id') || '{"type": "node_source"}')::text AS line
FROM memflow.node_source t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_edge_source
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id') || '{"type": "edge_source"}')::text AS line
FROM memflow.edge_source t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_node_chunk
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id') || '{"type": "node_chunk"}')::text AS line
FROM memflow.node_chunk t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_change_log
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT ((to_jsonb(t) - 'dataset_id') || '{"type": "change_log"}')::text AS line
FROM memflow.change_log t WHERE t.dataset_id = :dataset_id ORDER BY t.ctid;

-- name: export_vector
-- One record per row of every per-field embedding table, each table in storage order; the
-- embedding (pgvector's text form, read back exactly) only :with_vectors.
DECLARE memflow_dump NO SCROLL CURSOR FOR
WITH v(collection, node_id, text_hash, text, embedding) AS (
  (SELECT 'Episode_summary', node_id, text_hash, text, embedding FROM memflow.episode_summary
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Facet_search_text', node_id, text_hash, text, embedding FROM memflow.facet_search_text
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Facet_anchor_text', node_id, text_hash, text, embedding FROM memflow.facet_anchor_text
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'FacetPoint_search_text', node_id, text_hash, text, embedding
     FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Entity_name', node_id, text_hash, text, embedding FROM memflow.entity_name
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Edge_text', NULL::uuid, text_hash, text, embedding FROM memflow.edge_text
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Procedure_summary', node_id, text_hash, text, embedding FROM memflow.procedure_summary
    WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Procedure_step_text', node_id, text_hash, text, embedding
     FROM memflow.procedure_step_text WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'Procedure_context_text', node_id, text_hash, text, embedding
     FROM memflow.procedure_context_text WHERE dataset_id = :dataset_id ORDER BY ctid)
  UNION ALL
  (SELECT 'EntityType_name', node_id, text_hash, text, embedding FROM memflow.entitytype_name
    WHERE dataset_id = :dataset_id ORDER BY ctid)
)
SELECT (jsonb_strip_nulls(jsonb_build_object('type', 'vector', 'collection', collection,
                                             'node_id', node_id))
        || jsonb_build_object('text_hash', encode(text_hash, 'hex'), 'text', text)
        || CASE WHEN :with_vectors THEN jsonb_build_object('embedding', CAST(CAST(embedding AS text) AS jsonb))
                ELSE '{}' END)::text AS line
FROM v;

-- ------------------------------------------------------------------------------------- import

-- name: import_target
-- Before an import: the store's dimension and the target dataset, if it exists.
SELECT (SELECT CAST(value AS integer) FROM memflow.store_meta WHERE key = 'embedding_dim') AS dim,
       (SELECT id FROM memflow.dataset WHERE name = :name) AS dataset_id;

-- name: import_claim
-- The target dataset, locked until the import commits (a second import into it waits), with its
-- embedder and whether it holds anything yet. Run after dataset_create.
SELECT d.meta ->> 'embedder' AS embedder,
       EXISTS (SELECT 1 FROM memflow.document WHERE dataset_id = d.id)
       OR EXISTS (SELECT 1 FROM memflow.node WHERE dataset_id = d.id)
       OR EXISTS (SELECT 1 FROM memflow.edge_text WHERE dataset_id = d.id) AS used
FROM memflow.dataset d WHERE d.id = :dataset_id FOR UPDATE;

-- name: import_stage
-- The staging tables of one import (dropped when it commits or fails): each table's columns plus
-- the dump line a row came from; the vectors, the embeddings computed here, and the id map with
-- its lookups (pg_temp functions last the session, so they are replaced each time).
DO $$
BEGIN
  CREATE TEMP TABLE import_document ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.document t WITH NO DATA;
  CREATE TEMP TABLE import_chunk ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.chunk t WITH NO DATA;
  CREATE TEMP TABLE import_node ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.node t WITH NO DATA;
  CREATE TEMP TABLE import_edge ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.edge t WITH NO DATA;
  CREATE TEMP TABLE import_node_source ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.node_source t WITH NO DATA;
  CREATE TEMP TABLE import_edge_source ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.edge_source t WITH NO DATA;
  CREATE TEMP TABLE import_node_chunk ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.node_chunk t WITH NO DATA;
  CREATE TEMP TABLE import_change_log ON COMMIT DROP AS
    SELECT 0::bigint AS line, t.* FROM memflow.change_log t WITH NO DATA;
  CREATE TEMP TABLE import_vector (line bigint, collection text, node_id uuid, text_hash bytea,
                                   text text, embedding vector) ON COMMIT DROP;
  CREATE TEMP TABLE import_embedding (text_hash bytea PRIMARY KEY, embedding vector) ON COMMIT DROP;
  CREATE TEMP TABLE import_map (old uuid PRIMARY KEY, new uuid NOT NULL) ON COMMIT DROP;
  -- An id of the dump -> its id in the new dataset (itself unless re-derived).
  CREATE OR REPLACE FUNCTION pg_temp.import_id(old uuid) RETURNS uuid LANGUAGE sql STABLE AS
    $f$ SELECT coalesce((SELECT m.new FROM pg_temp.import_map m WHERE m.old = $1), $1) $f$;
  -- The same for an id written as text in JSON (other text is returned as it is).
  CREATE OR REPLACE FUNCTION pg_temp.import_id_text(t text) RETURNS text LANGUAGE sql STABLE AS
    $f$ SELECT CASE WHEN $1 ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                    THEN pg_temp.import_id(CAST($1 AS uuid))::text ELSE $1 END $f$;
  -- A node's props: the document ids of a merge record (props.merge.docs, memflow.store.merge)
  -- mapped, and its base embedding dropped when the dump's vectors are not kept.
  CREATE OR REPLACE FUNCTION pg_temp.import_props(props jsonb, strip boolean) RETURNS jsonb
    LANGUAGE sql STABLE AS $f$
    SELECT CASE WHEN jsonb_typeof($1 -> 'merge') IS DISTINCT FROM 'object' THEN $1
           ELSE jsonb_set($1, '{merge}', ($1 -> 'merge')
             || CASE WHEN $2 AND jsonb_typeof($1 #> '{merge,base}') = 'object'
                     THEN jsonb_build_object('base', ($1 #> '{merge,base}') || '{"vector": null}')
                     ELSE '{}' END
             || CASE WHEN jsonb_typeof($1 #> '{merge,docs}') = 'array'
                     THEN jsonb_build_object('docs', (
                       SELECT coalesce(jsonb_agg(CASE WHEN jsonb_typeof(d -> 0) = 'string'
                                                      THEN jsonb_set(d, '{0}', to_jsonb(pg_temp.import_id_text(d ->> 0)))
                                                      ELSE d END ORDER BY i), '[]')
                       FROM jsonb_array_elements($1 #> '{merge,docs}') WITH ORDINALITY AS x(d, i)))
                     ELSE '{}' END)
           END $f$;
  -- A change's detail: ids written as text values mapped (superseded_by, previous, ...).
  CREATE OR REPLACE FUNCTION pg_temp.import_detail(detail jsonb) RETURNS jsonb LANGUAGE sql STABLE AS
    $f$ SELECT CASE WHEN jsonb_typeof($1) IS DISTINCT FROM 'object' THEN $1
               ELSE coalesce((SELECT jsonb_object_agg(k, CASE WHEN jsonb_typeof(v) = 'string'
                                                             THEN to_jsonb(pg_temp.import_id_text(v #>> '{}'))
                                                             ELSE v END)
                              FROM jsonb_each($1) AS e(k, v)), '{}') END $f$;
END $$;

-- Staging: the batch parameter is a JSON array of [line number, record] pairs, each record read by column
-- name into its table's row type (fields the record lacks are NULL).

-- name: import_stage_document
INSERT INTO import_document
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.document, x -> 1) r;

-- name: import_stage_chunk
INSERT INTO import_chunk
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.chunk, x -> 1) r;

-- name: import_stage_node
INSERT INTO import_node
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.node, x -> 1) r;

-- name: import_stage_edge
-- text_hash is hex in the dump: prefixed with \x it is bytea's own text form.
INSERT INTO import_edge
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.edge,
    (x -> 1) || jsonb_build_object('text_hash', '\x' || (x -> 1 ->> 'text_hash'))) r;

-- name: import_stage_node_source
INSERT INTO import_node_source
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.node_source, x -> 1) r;

-- name: import_stage_edge_source
INSERT INTO import_edge_source
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.edge_source, x -> 1) r;

-- name: import_stage_node_chunk
INSERT INTO import_node_chunk
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.node_chunk, x -> 1) r;

-- name: import_stage_change_log
INSERT INTO import_change_log
SELECT CAST(x ->> 0 AS bigint), r.* FROM jsonb_array_elements(CAST(:batch AS jsonb)) x,
  LATERAL jsonb_populate_record(NULL::memflow.change_log, x -> 1) r;

-- name: import_stage_vector
-- The embedding only when the dump's vectors are kept (:keep_vectors); else it is embedded here.
INSERT INTO import_vector (line, collection, node_id, text_hash, text, embedding)
SELECT CAST(x ->> 0 AS bigint), x -> 1 ->> 'collection', CAST(x -> 1 ->> 'node_id' AS uuid),
       decode(x -> 1 ->> 'text_hash', 'hex'), x -> 1 ->> 'text',
       CASE WHEN :keep_vectors THEN CAST(x -> 1 ->> 'embedding' AS vector) END
FROM jsonb_array_elements(CAST(:batch AS jsonb)) x;

-- name: import_stage_done
-- What the checks and the id map look rows up by; temporary tables are never analysed otherwise.
DO $$
BEGIN
  CREATE INDEX ON import_document (id);
  CREATE INDEX ON import_chunk (id);
  CREATE INDEX ON import_node (id);
  CREATE INDEX ON import_edge (id);
  CREATE INDEX ON import_edge (src);
  CREATE INDEX ON import_edge (dst);
  CREATE INDEX ON import_vector (line);
  ANALYZE import_document, import_chunk, import_node, import_edge, import_node_source,
          import_edge_source, import_node_chunk, import_change_log, import_vector;
END $$;

-- name: import_check
-- The first problem of the staged dump, by line: a record repeated, or a reference to a record
-- the dump does not hold. Empty when the dump is consistent.
WITH kinds(collection, kind) AS (VALUES
  ('Episode_summary', 'Episode'), ('Facet_search_text', 'Facet'), ('Facet_anchor_text', 'Facet'),
  ('FacetPoint_search_text', 'FacetPoint'), ('Entity_name', 'Entity'),
  ('Procedure_summary', 'Procedure'), ('Procedure_step_text', 'ProcedureStepPoint'),
  ('Procedure_context_text', 'ProcedureContextPoint'), ('EntityType_name', 'EntityType')),
problems(line, problem) AS (
  SELECT max(line), format('repeats document %s (first at line %s)', id, min(line))
    FROM import_document GROUP BY id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats chunk %s (first at line %s)', id, min(line))
    FROM import_chunk GROUP BY id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats node %s (first at line %s)', id, min(line))
    FROM import_node GROUP BY id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats the %s named %s (first at line %s)', kind, canonical_name, min(line))
    FROM import_node WHERE kind IN ('Entity', 'EntityType') GROUP BY kind, canonical_name
    HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats edge %s (first at line %s)', id, min(line))
    FROM import_edge GROUP BY id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats the %s edge from %s to %s (first at line %s)', relationship,
                           src, dst, min(line))
    FROM import_edge GROUP BY src, relationship, dst HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats the source of node %s (first at line %s)', node_id, min(line))
    FROM import_node_source GROUP BY node_id, document_id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats the source of edge %s (first at line %s)', edge_id, min(line))
    FROM import_edge_source GROUP BY edge_id, document_id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats the chunk of node %s (first at line %s)', node_id, min(line))
    FROM import_node_chunk GROUP BY node_id, chunk_id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats change %s (first at line %s)', id, min(line))
    FROM import_change_log GROUP BY id HAVING count(*) > 1
  UNION ALL
  SELECT max(line), format('repeats a %s vector (first at line %s)', collection, min(line))
    FROM import_vector GROUP BY collection, node_id, CASE WHEN node_id IS NULL THEN text_hash END
    HAVING count(*) > 1
  UNION ALL
  SELECT c.line, format('chunk %s belongs to document %s, which the dump does not hold', c.id,
                        c.document_id)
    FROM import_chunk c WHERE NOT EXISTS (SELECT 1 FROM import_document d WHERE d.id = c.document_id)
  UNION ALL
  SELECT e.line, format('edge %s starts at node %s, which the dump does not hold', e.id, e.src)
    FROM import_edge e WHERE NOT EXISTS (SELECT 1 FROM import_node n WHERE n.id = e.src)
  UNION ALL
  SELECT e.line, format('edge %s ends at node %s, which the dump does not hold', e.id, e.dst)
    FROM import_edge e WHERE NOT EXISTS (SELECT 1 FROM import_node n WHERE n.id = e.dst)
  UNION ALL
  SELECT s.line, format('names node %s, which the dump does not hold', s.node_id)
    FROM import_node_source s WHERE NOT EXISTS (SELECT 1 FROM import_node n WHERE n.id = s.node_id)
  UNION ALL
  SELECT s.line, format('names document %s, which the dump does not hold', s.document_id)
    FROM import_node_source s
    WHERE NOT EXISTS (SELECT 1 FROM import_document d WHERE d.id = s.document_id)
  UNION ALL
  SELECT s.line, format('names edge %s, which the dump does not hold', s.edge_id)
    FROM import_edge_source s WHERE NOT EXISTS (SELECT 1 FROM import_edge e WHERE e.id = s.edge_id)
  UNION ALL
  SELECT s.line, format('names document %s, which the dump does not hold', s.document_id)
    FROM import_edge_source s
    WHERE NOT EXISTS (SELECT 1 FROM import_document d WHERE d.id = s.document_id)
  UNION ALL
  SELECT s.line, format('names node %s, which the dump does not hold', s.node_id)
    FROM import_node_chunk s WHERE NOT EXISTS (SELECT 1 FROM import_node n WHERE n.id = s.node_id)
  UNION ALL
  SELECT s.line, format('names chunk %s, which the dump does not hold', s.chunk_id)
    FROM import_node_chunk s WHERE NOT EXISTS (SELECT 1 FROM import_chunk c WHERE c.id = s.chunk_id)
  UNION ALL
  SELECT v.line, format('a %s vector of node %s, which the dump does not hold as a %s',
                        v.collection, v.node_id, k.kind)
    FROM import_vector v JOIN kinds k ON k.collection = v.collection
    WHERE NOT EXISTS (SELECT 1 FROM import_node n WHERE n.id = v.node_id AND n.kind = k.kind)
)
SELECT line, problem FROM problems ORDER BY line LIMIT 1;

-- ------------------------------------------------------------------- ids for the new dataset
-- memflow's ids are derived from the dataset's id and content (memflow.ids.make_id). Each cursor
-- below lists what one kind of id is derived from, with the new ids of what it depends on
-- (earlier passes); memflow.store.rekey re-derives each id that its recipe reproduces and adds
-- the pair to import_map. Ids no recipe reproduces stay as they are.

-- name: rekey_documents
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT id, content_hash, scope, metadata FROM import_document;

-- name: rekey_chunks
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT id, document_id, pg_temp.import_id(document_id) AS document_new, idx FROM import_chunk;

-- name: rekey_roots
-- Episodes (from their name and summary as first written: a merge record keeps that summary),
-- Entities and EntityTypes (from their canonical names).
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT id, kind, name, summary, canonical_name, props #>> '{merge,base,text}' AS base_text
FROM import_node WHERE kind IN ('Episode', 'Entity', 'EntityType');

-- name: rekey_procedures
-- A Procedure from its key, name, summary, ordered steps and context points.
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT p.id, p.name, p.summary, p.canonical_name,
       ARRAY(SELECT s.search_text FROM import_edge e JOIN import_node s ON s.id = e.dst
             WHERE e.src = p.id AND e.relationship = 'has_key_point'
             ORDER BY s.props -> 'position', s.line) AS steps,
       ARRAY(SELECT (c.props ->> 'aspect') || ':' || c.search_text
             FROM import_edge e JOIN import_node c ON c.id = e.dst
             WHERE e.src = p.id AND e.relationship = 'has_context_point' ORDER BY c.line) AS context
FROM import_node p WHERE p.kind = 'Procedure';

-- name: rekey_children
-- Facets, FacetPoints and a procedure's points, from their parent (through :relationship) and
-- their text (a step's position, a context point's aspect).
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT n.id, n.search_text, n.props ->> 'position' AS position, n.props ->> 'aspect' AS aspect,
       array_agg(e.src ORDER BY e.line) AS parents,
       array_agg(pg_temp.import_id(e.src) ORDER BY e.line) AS parents_new
FROM import_node n JOIN import_edge e ON e.dst = n.id AND e.relationship = :relationship
WHERE n.kind = :kind
GROUP BY n.id, n.search_text, n.props;

-- name: rekey_edges
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT id, src, relationship, dst, pg_temp.import_id(src) AS src_new,
       pg_temp.import_id(dst) AS dst_new
FROM import_edge;

-- name: rekey_insert
INSERT INTO import_map (old, new)
SELECT r.old, r.new FROM jsonb_to_recordset(CAST(:pairs AS jsonb)) AS r(old uuid, new uuid)
ON CONFLICT (old) DO NOTHING;

-- ------------------------------------------------------------------------------------- write
-- Every table from its staging table, ids through import_id, rows in dump order.

-- name: import_write_document
INSERT INTO memflow.document (dataset_id, id, source, title, content_type, content_hash,
                              reference_time, created_at, meta, version, previous_id, replaced_by,
                              scope, metadata)
SELECT :dataset_id, pg_temp.import_id(id), source, title, content_type, content_hash,
       reference_time, created_at, meta, version, pg_temp.import_id(previous_id),
       pg_temp.import_id(replaced_by), scope, metadata
FROM import_document ORDER BY line;

-- name: import_write_chunk
INSERT INTO memflow.chunk (dataset_id, id, document_id, idx, key, text, speaker, ts)
SELECT :dataset_id, pg_temp.import_id(id), pg_temp.import_id(document_id), idx, key, text,
       speaker, ts
FROM import_chunk ORDER BY line;

-- name: import_write_node
INSERT INTO memflow.node (dataset_id, id, kind, name, summary, search_text, anchor_text,
                          description, facet_type, canonical_name, entity_type, memory_type,
                          status, display_only, time_start, time_end, time_confidence, time_text,
                          props, created_at, updated_at, valid_at, recorded_at, invalid_at,
                          superseded_by)
SELECT :dataset_id, pg_temp.import_id(id), kind, name, summary, search_text, anchor_text,
       description, facet_type, canonical_name, entity_type, memory_type, status, display_only,
       time_start, time_end, time_confidence, time_text, pg_temp.import_props(props, :strip),
       created_at, updated_at, valid_at, recorded_at, invalid_at,
       pg_temp.import_id(superseded_by)
FROM import_node ORDER BY line;

-- name: import_write_edge
INSERT INTO memflow.edge (dataset_id, id, src, relationship, dst, edge_text, text_hash, weight,
                          created_at, valid_at, recorded_at, invalid_at, superseded_by)
SELECT :dataset_id, pg_temp.import_id(id), pg_temp.import_id(src), relationship,
       pg_temp.import_id(dst), edge_text, text_hash, weight, created_at, valid_at, recorded_at,
       invalid_at, pg_temp.import_id(superseded_by)
FROM import_edge ORDER BY line;

-- name: import_write_node_source
INSERT INTO memflow.node_source (dataset_id, node_id, document_id)
SELECT :dataset_id, pg_temp.import_id(node_id), pg_temp.import_id(document_id)
FROM import_node_source ORDER BY line;

-- name: import_write_edge_source
INSERT INTO memflow.edge_source (dataset_id, edge_id, document_id)
SELECT :dataset_id, pg_temp.import_id(edge_id), pg_temp.import_id(document_id)
FROM import_edge_source ORDER BY line;

-- name: import_write_node_chunk
INSERT INTO memflow.node_chunk (dataset_id, node_id, chunk_id)
SELECT :dataset_id, pg_temp.import_id(node_id), pg_temp.import_id(chunk_id)
FROM import_node_chunk ORDER BY line;

-- name: import_write_change_log
INSERT INTO memflow.change_log (dataset_id, id, node_id, document_id, action, reason, actor, at,
                                detail)
SELECT :dataset_id, id, pg_temp.import_id(node_id), pg_temp.import_id(document_id), action, reason,
       actor, at, pg_temp.import_detail(detail)
FROM import_change_log ORDER BY line;

-- name: import_texts
-- The distinct texts to embed (vectors the dump lacks, or all with re_embed).
DECLARE memflow_dump NO SCROLL CURSOR FOR
SELECT text_hash, min(text) AS text FROM import_vector WHERE embedding IS NULL
GROUP BY text_hash ORDER BY text_hash;

-- name: import_texts_count
SELECT count(DISTINCT text_hash) AS n FROM import_vector WHERE embedding IS NULL;

-- name: import_embedding_insert
INSERT INTO import_embedding (text_hash, embedding) VALUES (:text_hash, :embedding)
ON CONFLICT (text_hash) DO NOTHING;

-- name: import_vector_span
SELECT min(line) AS first, max(line) AS last, count(*) AS n FROM import_vector;

-- name: import_write_vectors
-- The vector rows of dump lines :lo < line <= :hi into their tables (each insert also updates
-- that table's HNSW index: the slow part of an import, hence batches with progress between).
WITH v AS (
  SELECT v.line, v.collection, pg_temp.import_id(v.node_id) AS node_id, v.text_hash, v.text,
         coalesce(v.embedding, e.embedding) AS embedding
  FROM import_vector v LEFT JOIN import_embedding e ON e.text_hash = v.text_hash
  WHERE v.line > :lo AND v.line <= :hi
), episode_summary AS (
  INSERT INTO memflow.episode_summary (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Episode_summary' ORDER BY line RETURNING 1
), facet_search_text AS (
  INSERT INTO memflow.facet_search_text (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Facet_search_text' ORDER BY line RETURNING 1
), facet_anchor_text AS (
  INSERT INTO memflow.facet_anchor_text (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Facet_anchor_text' ORDER BY line RETURNING 1
), facetpoint_search_text AS (
  INSERT INTO memflow.facetpoint_search_text (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'FacetPoint_search_text' ORDER BY line RETURNING 1
), entity_name AS (
  INSERT INTO memflow.entity_name (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Entity_name' ORDER BY line RETURNING 1
), edge_text AS (
  INSERT INTO memflow.edge_text (dataset_id, text_hash, text, embedding)
  SELECT :dataset_id, text_hash, text, embedding FROM v
  WHERE collection = 'Edge_text' ORDER BY line RETURNING 1
), procedure_summary AS (
  INSERT INTO memflow.procedure_summary (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Procedure_summary' ORDER BY line RETURNING 1
), procedure_step_text AS (
  INSERT INTO memflow.procedure_step_text (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Procedure_step_text' ORDER BY line RETURNING 1
), procedure_context_text AS (
  INSERT INTO memflow.procedure_context_text (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'Procedure_context_text' ORDER BY line RETURNING 1
), entitytype_name AS (
  INSERT INTO memflow.entitytype_name (dataset_id, node_id, text_hash, text, embedding)
  SELECT :dataset_id, node_id, text_hash, text, embedding FROM v
  WHERE collection = 'EntityType_name' ORDER BY line RETURNING 1
)
SELECT (SELECT count(*) FROM episode_summary) + (SELECT count(*) FROM facet_search_text)
       + (SELECT count(*) FROM facet_anchor_text) + (SELECT count(*) FROM facetpoint_search_text)
       + (SELECT count(*) FROM entity_name) + (SELECT count(*) FROM edge_text)
       + (SELECT count(*) FROM procedure_summary) + (SELECT count(*) FROM procedure_step_text)
       + (SELECT count(*) FROM procedure_context_text) + (SELECT count(*) FROM entitytype_name)
       AS written;
