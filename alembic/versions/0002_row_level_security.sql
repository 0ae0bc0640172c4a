-- Revision 0002 (frozen): row-level security, as the release created it. Never edit this file.
-- Every dataset-scoped table is readable and writable only for the dataset bound to the
-- transaction (SET LOCAL memflow.dataset_id). FORCE applies the policies to the tables' owner too;
-- superusers and BYPASSRLS roles skip RLS, so memflow runs as memflow_app (SET ROLE) when it can.

-- The role is cluster-wide: created once, shared by every memflow database of the server.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    CREATE ROLE memflow_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'memflow: no privilege to create role memflow_app; RLS applies to the owner (FORCE)';
END $$;

CREATE FUNCTION memflow.current_dataset() RETURNS uuid
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('memflow.dataset_id', true), '')::uuid $$;
COMMENT ON FUNCTION memflow.current_dataset() IS
  'The dataset bound to this transaction (SET LOCAL memflow.dataset_id); NULL when unbound.';

ALTER TABLE memflow.document ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.document FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.document
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.chunk ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.chunk FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.chunk
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.node ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.node FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.node
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.edge ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.edge
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.node_source ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_source FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.node_source
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.edge_source ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_source FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.edge_source
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.node_chunk ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_chunk FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.node_chunk
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.episode_summary ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.episode_summary FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.episode_summary
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.facet_search_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.facet_search_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.facet_search_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.facet_anchor_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.facet_anchor_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.facet_anchor_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.facetpoint_search_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.facetpoint_search_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.facetpoint_search_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.entity_name ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.entity_name FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.entity_name
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER TABLE memflow.edge_text ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_text FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.edge_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

-- The dataset directory: names are listable (to resolve --dataset NAME), but a row can be
-- changed or deleted only by a transaction bound to that dataset.
ALTER TABLE memflow.dataset ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.dataset FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_directory ON memflow.dataset FOR SELECT USING (true);
CREATE POLICY dataset_create ON memflow.dataset FOR INSERT WITH CHECK (true);
CREATE POLICY dataset_update ON memflow.dataset FOR UPDATE
  USING (id = memflow.current_dataset()) WITH CHECK (id = memflow.current_dataset());
CREATE POLICY dataset_delete ON memflow.dataset FOR DELETE USING (id = memflow.current_dataset());

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT USAGE ON SCHEMA memflow TO memflow_app;
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA memflow TO memflow_app;
    REVOKE INSERT, UPDATE, DELETE ON memflow.store_meta, memflow.alembic_version FROM memflow_app;
    GRANT EXECUTE ON FUNCTION memflow.current_dataset() TO memflow_app;
  END IF;
END $$;
