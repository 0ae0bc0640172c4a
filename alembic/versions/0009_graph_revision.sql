-- Revision 0009: each dataset's graph revision. Every statement that writes the rows a search's
-- projection and expansion read (node, edge, document, node_source, facetpoint_search_text) gives
-- the datasets it wrote a new revision, in the writer's transaction (a statement trigger over its
-- transition table: one row update per statement, not per row). A search reads the revision in its recall
-- statement; a process that cached the dataset's graph at that revision reads it from memory
-- (memflow.recall.graphcache). No row: no write since this revision, nothing cached.

-- Revisions are drawn from one sequence, so a value never repeats: not across datasets, nor for
-- a dataset dropped and created again under its name (the same id).
CREATE SEQUENCE memflow.graph_revision_seq;
COMMENT ON SEQUENCE memflow.graph_revision_seq IS 'Every graph revision''s value (memflow.graph_revision).';

CREATE TABLE memflow.graph_revision (
  dataset_id uuid NOT NULL,
  revision bigint NOT NULL,
  CONSTRAINT graph_revision_pkey PRIMARY KEY (dataset_id),
  CONSTRAINT graph_revision_dataset_fk FOREIGN KEY (dataset_id)
    REFERENCES memflow.dataset (id) ON DELETE CASCADE
);
ALTER TABLE memflow.graph_revision ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.graph_revision FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.graph_revision
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
COMMENT ON TABLE memflow.graph_revision IS
  'Each dataset''s graph revision: new with every statement that writes its nodes, edges, documents, node sources or point embeddings.';
COMMENT ON COLUMN memflow.graph_revision.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.graph_revision.revision IS 'The revision of the dataset''s graph (memflow.graph_revision_seq): a new value with every write.';

-- (A dataset being deleted gets no row: its nodes go with it.)
CREATE FUNCTION memflow.bump_graph_revision() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO memflow.graph_revision AS r (dataset_id, revision)
  SELECT w.dataset_id, nextval('memflow.graph_revision_seq')
    FROM (SELECT DISTINCT dataset_id FROM written) w
   WHERE EXISTS (SELECT 1 FROM memflow.dataset d WHERE d.id = w.dataset_id)
  ON CONFLICT (dataset_id) DO UPDATE SET revision = excluded.revision;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION memflow.bump_graph_revision() IS
  'Statement trigger: a new graph revision for every dataset the statement wrote (transition table "written").';

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['node', 'edge', 'document', 'node_source', 'facetpoint_search_text'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON memflow.%I REFERENCING NEW TABLE AS written '
                   'FOR EACH STATEMENT EXECUTE FUNCTION memflow.bump_graph_revision()',
                   t || '_revision_insert', t);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON memflow.%I REFERENCING NEW TABLE AS written '
                   'FOR EACH STATEMENT EXECUTE FUNCTION memflow.bump_graph_revision()',
                   t || '_revision_update', t);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON memflow.%I REFERENCING OLD TABLE AS written '
                   'FOR EACH STATEMENT EXECUTE FUNCTION memflow.bump_graph_revision()',
                   t || '_revision_delete', t);
  END LOOP;
END $$;

-- memflow_app writes it (through the triggers, as the writer); readers granted a dataset read it.
DO $$
DECLARE
  r record;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT SELECT, INSERT, UPDATE ON memflow.graph_revision TO memflow_app;
    GRANT USAGE ON SEQUENCE memflow.graph_revision_seq TO memflow_app;
  END IF;
  FOR r IN SELECT DISTINCT role_name FROM memflow.dataset_reader
           WHERE EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = role_name) LOOP
    EXECUTE format('GRANT SELECT ON memflow.graph_revision TO %I', r.role_name);
  END LOOP;
END $$;
