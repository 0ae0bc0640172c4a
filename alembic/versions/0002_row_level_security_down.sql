-- Revision 0002 downgrade (frozen): drops exactly what 0002_row_level_security.sql created,
-- except the role memflow_app, which other memflow databases of the server may use.

DROP POLICY dataset_isolation ON memflow.document;
ALTER TABLE memflow.document NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.document DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.chunk;
ALTER TABLE memflow.chunk NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.chunk DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.node;
ALTER TABLE memflow.node NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.edge;
ALTER TABLE memflow.edge NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.node_source;
ALTER TABLE memflow.node_source NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_source DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.edge_source;
ALTER TABLE memflow.edge_source NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_source DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.node_chunk;
ALTER TABLE memflow.node_chunk NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_chunk DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.episode_summary;
ALTER TABLE memflow.episode_summary NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.episode_summary DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.facet_search_text;
ALTER TABLE memflow.facet_search_text NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.facet_search_text DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.facet_anchor_text;
ALTER TABLE memflow.facet_anchor_text NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.facet_anchor_text DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.facetpoint_search_text;
ALTER TABLE memflow.facetpoint_search_text NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.facetpoint_search_text DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.entity_name;
ALTER TABLE memflow.entity_name NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.entity_name DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_isolation ON memflow.edge_text;
ALTER TABLE memflow.edge_text NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_text DISABLE ROW LEVEL SECURITY;

DROP POLICY dataset_directory ON memflow.dataset;
DROP POLICY dataset_create ON memflow.dataset;
DROP POLICY dataset_update ON memflow.dataset;
DROP POLICY dataset_delete ON memflow.dataset;
ALTER TABLE memflow.dataset NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.dataset DISABLE ROW LEVEL SECURITY;
DROP FUNCTION memflow.current_dataset();

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    REVOKE ALL ON ALL TABLES IN SCHEMA memflow FROM memflow_app;
    REVOKE USAGE ON SCHEMA memflow FROM memflow_app;
  END IF;
END $$;
