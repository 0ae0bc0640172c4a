-- Revision 0005: procedural memory and entity types (seed 003's Procedure, ProcedureContextPoint,
-- ProcedureStepPoint and EntityType). They are nodes of memflow.node like every other kind, so
-- provenance (node_source, node_chunk), edges with edge_text, forget and row-level security apply
-- to them unchanged. A procedure's versions share canonical_name (its key); props holds its
-- version, a step point's position and a context point's aspect.

ALTER TABLE memflow.node DROP CONSTRAINT node_kind_check;
ALTER TABLE memflow.node ADD CONSTRAINT node_kind_check CHECK (kind IN ('Episode', 'Facet',
  'FacetPoint', 'Entity', 'EntityType', 'Procedure', 'ProcedureContextPoint', 'ProcedureStepPoint'));
ALTER TABLE memflow.edge DROP CONSTRAINT edge_relationship_check;
ALTER TABLE memflow.edge ADD CONSTRAINT edge_relationship_check CHECK (relationship IN (
  'has_facet', 'has_point', 'involves_entity', 'same_entity_as', 'is_a', 'has_procedure',
  'has_context_point', 'has_key_point', 'supersedes'));

CREATE UNIQUE INDEX node_entitytype_canonical_idx ON memflow.node (dataset_id, canonical_name)
  WHERE kind = 'EntityType';
CREATE INDEX node_procedure_key_idx ON memflow.node (dataset_id, canonical_name)
  WHERE kind = 'Procedure';

CREATE TABLE memflow.procedure_summary (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT procedure_summary_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT procedure_summary_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.procedure_summary IS 'Embeddings of Procedure_summary (cosine HNSW).';
COMMENT ON COLUMN memflow.procedure_summary.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.procedure_summary.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.procedure_summary.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.procedure_summary.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.procedure_summary.embedding IS 'The embedding vector (cosine distance; HNSW index).';
CREATE INDEX procedure_summary_hnsw_idx ON memflow.procedure_summary
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX procedure_summary_hash_idx ON memflow.procedure_summary (dataset_id, text_hash);
ALTER TABLE memflow.procedure_summary ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.procedure_summary FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.procedure_summary
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

CREATE TABLE memflow.procedure_step_text (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT procedure_step_text_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT procedure_step_text_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.procedure_step_text IS 'Embeddings of Procedure_step_text (cosine HNSW).';
COMMENT ON COLUMN memflow.procedure_step_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.procedure_step_text.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.procedure_step_text.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.procedure_step_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.procedure_step_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
CREATE INDEX procedure_step_text_hnsw_idx ON memflow.procedure_step_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX procedure_step_text_hash_idx ON memflow.procedure_step_text (dataset_id, text_hash);
ALTER TABLE memflow.procedure_step_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.procedure_step_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.procedure_step_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

CREATE TABLE memflow.procedure_context_text (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT procedure_context_text_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT procedure_context_text_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.procedure_context_text IS 'Embeddings of Procedure_context_text (cosine HNSW).';
COMMENT ON COLUMN memflow.procedure_context_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.procedure_context_text.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.procedure_context_text.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.procedure_context_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.procedure_context_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
CREATE INDEX procedure_context_text_hnsw_idx ON memflow.procedure_context_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX procedure_context_text_hash_idx ON memflow.procedure_context_text (dataset_id, text_hash);
ALTER TABLE memflow.procedure_context_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.procedure_context_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.procedure_context_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

CREATE TABLE memflow.entitytype_name (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT entitytype_name_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT entitytype_name_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.entitytype_name IS 'Embeddings of EntityType_name (cosine HNSW).';
COMMENT ON COLUMN memflow.entitytype_name.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.entitytype_name.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.entitytype_name.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.entitytype_name.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.entitytype_name.embedding IS 'The embedding vector (cosine distance; HNSW index).';
CREATE INDEX entitytype_name_hnsw_idx ON memflow.entitytype_name
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX entitytype_name_hash_idx ON memflow.entitytype_name (dataset_id, text_hash);
ALTER TABLE memflow.entitytype_name ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.entitytype_name FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.entitytype_name
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

CREATE VIEW memflow.procedures WITH (security_invoker = true) AS
SELECT d.name AS dataset, p.id, p.name, p.summary, p.status,
       coalesce((p.props ->> 'version')::integer, 1) AS version,
       ARRAY(SELECT s.search_text FROM memflow.edge k
               JOIN memflow.node s ON s.dataset_id = k.dataset_id AND s.id = k.dst
             WHERE k.dataset_id = p.dataset_id AND k.src = p.id AND k.relationship = 'has_key_point'
             ORDER BY (s.props ->> 'position')::integer, s.search_text) AS steps,
       ARRAY(SELECT (c.props ->> 'aspect') || ': ' || c.search_text FROM memflow.edge k
               JOIN memflow.node c ON c.dataset_id = k.dataset_id AND c.id = k.dst
             WHERE k.dataset_id = p.dataset_id AND k.src = p.id
               AND k.relationship = 'has_context_point'
             ORDER BY c.search_text) AS context,
       (SELECT min(e.src::text)::uuid FROM memflow.edge e
         WHERE e.dataset_id = p.dataset_id AND e.dst = p.id AND e.relationship = 'has_procedure')
         AS episode_id,
       (SELECT min(e.src::text)::uuid FROM memflow.edge e
         WHERE e.dataset_id = p.dataset_id AND e.dst = p.id AND e.relationship = 'supersedes')
         AS superseded_by,
       p.created_at, p.dataset_id
FROM memflow.node p JOIN memflow.dataset d ON d.id = p.dataset_id
WHERE p.kind = 'Procedure';
COMMENT ON VIEW memflow.procedures IS 'Procedures (how something is done): each version with its ordered steps and context; status current or superseded. Filter by dataset.';
COMMENT ON COLUMN memflow.procedures.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.procedures.id IS 'The procedure''s node id (memflow.node.id).';
COMMENT ON COLUMN memflow.procedures.name IS 'The procedure''s title.';
COMMENT ON COLUMN memflow.procedures.summary IS 'What the procedure does (embedded as Procedure_summary).';
COMMENT ON COLUMN memflow.procedures.status IS 'current, or superseded by a newer version.';
COMMENT ON COLUMN memflow.procedures.version IS '1 for the first version; each superseding version adds 1.';
COMMENT ON COLUMN memflow.procedures.steps IS 'The steps, in order.';
COMMENT ON COLUMN memflow.procedures.context IS 'When, why and preconditions, as aspect: text.';
COMMENT ON COLUMN memflow.procedures.episode_id IS 'The episode the procedure was laid out in.';
COMMENT ON COLUMN memflow.procedures.superseded_by IS 'The newer version, when this one is superseded.';
COMMENT ON COLUMN memflow.procedures.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.procedures.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';

COMMENT ON COLUMN memflow.node.kind IS 'Episode | Facet | FacetPoint | Entity | EntityType | Procedure | ProcedureContextPoint | ProcedureStepPoint';
COMMENT ON COLUMN memflow.node.canonical_name IS 'Entity, EntityType: NFKC, casefolded, punctuation removed; unique per dataset. Procedure: the key its versions share.';
COMMENT ON COLUMN memflow.node.status IS 'Episode: lifecycle status (e.g. open); Procedure: current or superseded.';
COMMENT ON COLUMN memflow.node.props IS 'Free-form JSON properties of the node (Procedure: version; step: position; context point: aspect).';
COMMENT ON COLUMN memflow.edge.relationship IS 'has_facet | has_point | involves_entity | same_entity_as | is_a | has_procedure | has_context_point | has_key_point | supersedes';

-- Roles that read the graph (memflow_app, readers granted a dataset) read the new relations too.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'memflow' AND table_name = 'node' AND privilege_type = 'SELECT'
             AND grantee NOT IN (current_user, 'memflow_app', 'PUBLIC')
  LOOP
    EXECUTE format('GRANT SELECT ON memflow.procedure_summary, memflow.procedure_step_text, '
                   'memflow.procedure_context_text, memflow.entitytype_name, memflow.procedures TO %I',
                   r.grantee);
  END LOOP;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON memflow.procedure_summary, memflow.procedure_step_text,
      memflow.procedure_context_text, memflow.entitytype_name TO memflow_app;
    GRANT SELECT ON memflow.procedures TO memflow_app;
  END IF;
END $$;
