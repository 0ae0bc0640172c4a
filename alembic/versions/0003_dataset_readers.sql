-- Revision 0003: dataset readers, and a comment on every column psql users read.
-- A role granted a dataset (memflow db grant-reader ROLE --dataset NAME) binds its psql session
-- with SELECT memflow.use_dataset('NAME'); row-level security then shows it that dataset's rows.
-- Other datasets are refused.

CREATE TABLE memflow.dataset_reader (
  dataset_id uuid NOT NULL,
  role_name text NOT NULL,
  granted_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT dataset_reader_pkey PRIMARY KEY (dataset_id, role_name),
  CONSTRAINT dataset_reader_dataset_fk FOREIGN KEY (dataset_id)
    REFERENCES memflow.dataset (id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.dataset_reader IS
  'Roles allowed to bind a psql session to a dataset with memflow.use_dataset(name).';
COMMENT ON COLUMN memflow.dataset_reader.role_name IS
  'A PostgreSQL role; its members may read the dataset (memflow db grant-reader ROLE --dataset NAME).';
COMMENT ON COLUMN memflow.dataset_reader.dataset_id IS
  'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.dataset_reader.granted_at IS 'When memflow db grant-reader granted it.';

ALTER TABLE memflow.dataset_reader ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.dataset_reader FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.dataset_reader
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

-- Runs as its owner (who may grant on the schema): records the grant under the dataset's own
-- binding (row-level security applies to the owner too) and gives the role read access.
CREATE FUNCTION memflow.grant_reader(dataset_name text, reader text) RETURNS uuid
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ds uuid;
BEGIN
  SELECT id INTO ds FROM memflow.dataset WHERE name = dataset_name;
  IF ds IS NULL THEN
    RAISE EXCEPTION 'memflow: no dataset %', quote_literal(dataset_name)
      USING ERRCODE = 'no_data_found', HINT = 'list the datasets with `memflow datasets`';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    RAISE EXCEPTION 'memflow: no role %', quote_ident(reader)
      USING ERRCODE = 'undefined_object', HINT = 'create it first: CREATE ROLE ... LOGIN';
  END IF;
  PERFORM set_config('memflow.dataset_id', ds::text, true);
  INSERT INTO memflow.dataset_reader (dataset_id, role_name) VALUES (ds, reader)
  ON CONFLICT DO NOTHING;
  EXECUTE format('GRANT USAGE ON SCHEMA memflow TO %I', reader);
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA memflow TO %I', reader);
  RETURN ds;
END $$;
REVOKE EXECUTE ON FUNCTION memflow.grant_reader(text, text) FROM PUBLIC;
COMMENT ON FUNCTION memflow.grant_reader(text, text) IS
  'Let a role read one dataset in psql (what `memflow db grant-reader ROLE --dataset NAME` runs).';

-- Binds the session (not only the transaction) when the session's login role was granted the
-- dataset, is a member of a granted role, owns the schema or is a superuser.
CREATE FUNCTION memflow.use_dataset(dataset_name text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ds uuid;
BEGIN
  SELECT id INTO ds FROM memflow.dataset WHERE name = dataset_name;
  IF ds IS NULL THEN
    RAISE EXCEPTION 'memflow: no dataset %', quote_literal(dataset_name)
      USING ERRCODE = 'no_data_found', HINT = 'list the datasets: SELECT name FROM memflow.dataset';
  END IF;
  PERFORM set_config('memflow.dataset_id', ds::text, true);
  IF NOT (
    EXISTS (SELECT 1 FROM memflow.dataset_reader r
            WHERE r.dataset_id = ds AND pg_has_role(session_user, r.role_name, 'MEMBER'))
    OR EXISTS (SELECT 1 FROM pg_roles WHERE rolname = session_user AND rolsuper)
    OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'memflow'),
                   'MEMBER')
  ) THEN
    RAISE EXCEPTION 'memflow: role % may not read dataset %', quote_ident(session_user),
      quote_literal(dataset_name)
      USING ERRCODE = 'insufficient_privilege',
            HINT = 'the store owner grants it: memflow db grant-reader ROLE --dataset NAME';
  END IF;
  PERFORM set_config('memflow.dataset_id', ds::text, false);
  RETURN format('this session reads dataset %s', dataset_name);
END $$;
COMMENT ON FUNCTION memflow.use_dataset(text) IS
  'Bind this psql session to a dataset the current login was granted (memflow db grant-reader).';

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON memflow.dataset_reader TO memflow_app;
  END IF;
END $$;

-- Every column of the tables and views psql users read says what it holds.
COMMENT ON COLUMN memflow.chunk.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.chunk.id IS 'Chunk id, unique in the dataset.';
COMMENT ON COLUMN memflow.chunk.document_id IS 'The document (memflow.document.id) of the row.';
COMMENT ON COLUMN memflow.chunk.idx IS 'Position of the chunk in its document, from 0.';
COMMENT ON COLUMN memflow.chunk.text IS 'The sentence or turn.';
COMMENT ON COLUMN memflow.chunk.speaker IS 'Who said it (dialog turns), else NULL.';
COMMENT ON COLUMN memflow.chunk.ts IS 'When it was said or written, if known.';
COMMENT ON COLUMN memflow.chunk.tsv IS 'Full-text vector (''simple'' configuration) for lexical search.';
COMMENT ON COLUMN memflow.dataset.id IS 'Dataset id: uuid5 of the name, the same in every store.';
COMMENT ON COLUMN memflow.dataset.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.dataset.meta IS 'Free-form JSON: the dataset records its embedder here.';
COMMENT ON COLUMN memflow.document.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.document.id IS 'Document id, unique in the dataset.';
COMMENT ON COLUMN memflow.document.source IS 'Where the input came from: a path, ''-'' for stdin, or add_episode.';
COMMENT ON COLUMN memflow.document.title IS 'The document''s title (a Markdown heading or the file name).';
COMMENT ON COLUMN memflow.document.content_type IS 'What the input was parsed as (markdown, text, conversation, draft, ...).';
COMMENT ON COLUMN memflow.document.reference_time IS 'The time relative dates in the document are read against.';
COMMENT ON COLUMN memflow.document.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.document.meta IS 'Free-form JSON about the input.';
COMMENT ON COLUMN memflow.edge.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.edge.id IS 'Edge id, unique in the dataset.';
COMMENT ON COLUMN memflow.edge.src IS 'The node the edge starts at (an Episode or a Facet).';
COMMENT ON COLUMN memflow.edge.dst IS 'The node the edge points to.';
COMMENT ON COLUMN memflow.edge.text_hash IS 'sha256 of edge_text: its row in memflow.edge_text.';
COMMENT ON COLUMN memflow.edge.weight IS 'Strength of the link (the column default unless a writer sets it).';
COMMENT ON COLUMN memflow.edge.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.edge_source.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.edge_source.edge_id IS 'The edge (memflow.edge.id) a document supports.';
COMMENT ON COLUMN memflow.edge_source.document_id IS 'The document (memflow.document.id) of the row.';
COMMENT ON COLUMN memflow.edge_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.edge_text.text_hash IS 'sha256 of the edge text: edges with the same text share it.';
COMMENT ON COLUMN memflow.edge_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.edge_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.entities.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.entities.id IS 'The entity''s node id.';
COMMENT ON COLUMN memflow.entities.name IS 'The name as first written.';
COMMENT ON COLUMN memflow.entities.canonical_name IS 'NFKC, casefolded, punctuation removed: one entity per name.';
COMMENT ON COLUMN memflow.entities.entity_type IS 'person, organisation, place, thing, ...';
COMMENT ON COLUMN memflow.entities.description IS 'Longer free text about the entity.';
COMMENT ON COLUMN memflow.entities.degree IS 'How many episodes and facets involve the entity.';
COMMENT ON COLUMN memflow.entities.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.entities.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.entity_name.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.entity_name.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.entity_name.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.entity_name.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.entity_name.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.episode_summary.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.episode_summary.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.episode_summary.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.episode_summary.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.episode_summary.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.episode_tree.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.episode_tree.episode_id IS 'The episode (memflow.node.id of kind Episode).';
COMMENT ON COLUMN memflow.episode_tree.tree IS 'One line of the indented tree: kind and text of the node.';
COMMENT ON COLUMN memflow.episode_tree.edge_text IS 'The text of the link from the parent to this node.';
COMMENT ON COLUMN memflow.episode_tree.depth IS '0 for the episode, 1 for facets and entities, 2 for points.';
COMMENT ON COLUMN memflow.episode_tree.kind IS 'Episode | Facet | FacetPoint | Entity';
COMMENT ON COLUMN memflow.episode_tree.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.episodes.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.episodes.id IS 'The episode''s node id (memflow.node.id).';
COMMENT ON COLUMN memflow.episodes.name IS 'The episode''s title.';
COMMENT ON COLUMN memflow.episodes.summary IS 'What happened, in a few sentences.';
COMMENT ON COLUMN memflow.episodes.status IS 'Lifecycle status, if given.';
COMMENT ON COLUMN memflow.episodes.memory_type IS 'The kind of memory (event, conversation, document, ...).';
COMMENT ON COLUMN memflow.episodes.time_start IS 'Start of the time the row is about (mentioned or inferred), if known.';
COMMENT ON COLUMN memflow.episodes.time_end IS 'End of the time the row is about, if known.';
COMMENT ON COLUMN memflow.episodes.time_text IS 'The time as the text mentioned it.';
COMMENT ON COLUMN memflow.episodes.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.episodes.updated_at IS 'When the row last changed (a merge updates episodes).';
COMMENT ON COLUMN memflow.episodes.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facet_anchor_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facet_anchor_text.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.facet_anchor_text.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.facet_anchor_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.facet_anchor_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.facet_points.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.facet_points.facet_id IS 'The facet the point belongs to.';
COMMENT ON COLUMN memflow.facet_points.id IS 'The point''s node id.';
COMMENT ON COLUMN memflow.facet_points.search_text IS 'The atomic statement (embedded).';
COMMENT ON COLUMN memflow.facet_points.description IS 'Longer free text, not embedded.';
COMMENT ON COLUMN memflow.facet_points.sources IS 'Keys of the chunks (turns, sentences) that support the point.';
COMMENT ON COLUMN memflow.facet_points.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.facet_points.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facet_search_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facet_search_text.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.facet_search_text.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.facet_search_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.facet_search_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.facetpoint_search_text.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facetpoint_search_text.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.facetpoint_search_text.text_hash IS 'sha256 of the embedded text: the same text is embedded once per dataset.';
COMMENT ON COLUMN memflow.facetpoint_search_text.text IS 'The text that was embedded.';
COMMENT ON COLUMN memflow.facetpoint_search_text.embedding IS 'The embedding vector (cosine distance; HNSW index).';
COMMENT ON COLUMN memflow.facets.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.facets.episode_id IS 'The episode (memflow.node.id of kind Episode).';
COMMENT ON COLUMN memflow.facets.id IS 'The facet''s node id.';
COMMENT ON COLUMN memflow.facets.facet_type IS 'The kind of aspect (plan, constraint, decision, fact, ...).';
COMMENT ON COLUMN memflow.facets.search_text IS 'The short handle of the aspect (embedded).';
COMMENT ON COLUMN memflow.facets.anchor_text IS 'The detailed text of the aspect (embedded).';
COMMENT ON COLUMN memflow.facets.description IS 'Longer free text, not embedded.';
COMMENT ON COLUMN memflow.facets.time_start IS 'Start of the time the row is about (mentioned or inferred), if known.';
COMMENT ON COLUMN memflow.facets.time_end IS 'End of the time the row is about, if known.';
COMMENT ON COLUMN memflow.facets.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.facets.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.node.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.node.id IS 'Node id, unique in the dataset.';
COMMENT ON COLUMN memflow.node.name IS 'Episode: its title; Entity: the name as written; else a short label.';
COMMENT ON COLUMN memflow.node.summary IS 'Episode: the summary (embedded as Episode_summary).';
COMMENT ON COLUMN memflow.node.description IS 'Longer free text about the node, not embedded.';
COMMENT ON COLUMN memflow.node.facet_type IS 'Facet: its kind (plan, constraint, decision, fact, ...).';
COMMENT ON COLUMN memflow.node.entity_type IS 'Entity: person, organisation, place, thing, ...';
COMMENT ON COLUMN memflow.node.memory_type IS 'Episode: the kind of memory (event, conversation, document, ...).';
COMMENT ON COLUMN memflow.node.status IS 'Episode: lifecycle status (e.g. active), if given.';
COMMENT ON COLUMN memflow.node.display_only IS 'True for nodes shown in context but never searched directly.';
COMMENT ON COLUMN memflow.node.time_start IS 'Start of the time the row is about (mentioned or inferred), if known.';
COMMENT ON COLUMN memflow.node.time_end IS 'End of the time the row is about, if known.';
COMMENT ON COLUMN memflow.node.time_confidence IS 'How sure the time span is, from 0 to 1.';
COMMENT ON COLUMN memflow.node.time_text IS 'The time as the text mentioned it (e.g. ''last Friday'').';
COMMENT ON COLUMN memflow.node.props IS 'Free-form JSON properties of the node.';
COMMENT ON COLUMN memflow.node.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.node.updated_at IS 'When the row last changed (a merge updates episodes).';
COMMENT ON COLUMN memflow.node.tsv IS 'Full-text vector (''simple'' configuration) for lexical search.';
COMMENT ON COLUMN memflow.node_chunk.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.node_chunk.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.node_chunk.chunk_id IS 'The chunk (memflow.chunk.id) the node was extracted from.';
COMMENT ON COLUMN memflow.node_source.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.node_source.node_id IS 'The node (memflow.node.id) of the row.';
COMMENT ON COLUMN memflow.node_source.document_id IS 'The document (memflow.document.id) of the row.';
COMMENT ON COLUMN memflow.store_meta.key IS 'Setting name: embedding_dim, embedding_model, ...';
COMMENT ON COLUMN memflow.store_meta.value IS 'Setting value, as text.';
