-- Revision 0007 downgrade: the policies key on the setting again, the directory lists every
-- name, grant_reader and use_dataset are 0003's, readers get back SELECT on every table, and
-- memflow_app no longer refreshes statistics.

DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 170000
     AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    EXECUTE 'REVOKE MAINTAIN ON memflow.node, memflow.node_chunk, memflow.chunk, memflow.edge, '
            'memflow.node_source, memflow.edge_source, memflow.facetpoint_search_text FROM memflow_app';
  END IF;
END $$;

DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT DISTINCT g.rolname AS role_name
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
                aclexplode(c.relacl) a JOIN pg_roles g ON g.oid = a.grantee
           WHERE n.nspname = 'memflow' AND c.relname = 'node' AND a.privilege_type = 'SELECT'
             AND NOT memflow.reads_every_dataset(g.rolname)
  LOOP
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA memflow TO %I', r.role_name);
  END LOOP;
END $$;

ALTER POLICY dataset_isolation ON memflow.document
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.chunk
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.node
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.edge
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.node_source
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.edge_source
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.node_chunk
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.episode_summary
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.facet_search_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.facet_anchor_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.facetpoint_search_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.entity_name
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.edge_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.change_log
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.procedure_summary
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.procedure_step_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.procedure_context_text
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
ALTER POLICY dataset_isolation ON memflow.entitytype_name
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());

ALTER POLICY dataset_directory ON memflow.dataset USING (true);
ALTER TABLE memflow.dataset_reader FORCE ROW LEVEL SECURITY;

CREATE OR REPLACE FUNCTION memflow.grant_reader(dataset_name text, reader text) RETURNS uuid
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

CREATE OR REPLACE FUNCTION memflow.use_dataset(dataset_name text) RETURNS text
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
DROP FUNCTION memflow.grant_reader_access(text);
DROP FUNCTION memflow.granted_datasets(name);
DROP FUNCTION memflow.readable_dataset(name);
DROP FUNCTION memflow.reads_every_dataset(name);
