-- Revision 0009 downgrade: no graph revision (search at 0008 caches no graph).

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['node', 'edge', 'document', 'node_source', 'facetpoint_search_text'] LOOP
    EXECUTE format('DROP TRIGGER %I ON memflow.%I', t || '_revision_insert', t);
    EXECUTE format('DROP TRIGGER %I ON memflow.%I', t || '_revision_update', t);
    EXECUTE format('DROP TRIGGER %I ON memflow.%I', t || '_revision_delete', t);
  END LOOP;
END $$;
DROP FUNCTION memflow.bump_graph_revision();
DROP TABLE memflow.graph_revision;
DROP SEQUENCE memflow.graph_revision_seq;
