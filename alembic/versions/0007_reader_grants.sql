-- Revision 0007: readers are bound by their grants, not by a setting they can change.
-- Until 0006 every policy compared dataset_id with memflow.current_dataset(), the custom setting
-- memflow.dataset_id that any role may SET, and grant_reader gave its role SELECT on every table:
-- a reader granted dataset A read B after SET memflow.dataset_id = '<B's id>'. From here:
--   * memflow.readable_dataset(role) is the dataset bound to the transaction when that role may
--     read it. The store's owner and memflow_app (and roles that use their privileges) read the
--     dataset they bind, as before; any other role only a dataset that it, or a role it belongs
--     to, was granted in memflow.dataset_reader. Every dataset policy calls it once per statement
--     (an initplan: (SELECT memflow.readable_dataset(current_user))).
--   * The dataset directory shows such a role the datasets it was granted, no others.
--   * Readers hold USAGE on the schema and SELECT on the graph's tables and views, nothing more:
--     no dataset_reader, store_meta or alembic_version, no write anywhere.

-- True for the roles that read whichever dataset they bind: members (with its privileges) of the
-- schema's owner or of memflow_app. Superusers are members of every role.
CREATE FUNCTION memflow.reads_every_dataset(who name) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN coalesce(pg_has_role(who, to_regrole('memflow_app'), 'USAGE'), false)
      OR pg_has_role(who, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'memflow'),
                     'USAGE');
END $$;
COMMENT ON FUNCTION memflow.reads_every_dataset(name) IS
  'True for the store''s owner, memflow_app and their members: they read the dataset they bind.';

-- Runs as its owner, who reads memflow.dataset_reader (no row-level security for the owner on
-- that table, below). A role is answered for only when the session may act as it (so a reader
-- cannot ask about another reader's grants).
CREATE FUNCTION memflow.readable_dataset(who name) RETURNS uuid
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ds uuid := nullif(current_setting('memflow.dataset_id', true), '')::uuid;
BEGIN
  -- memflow_app first (every statement of the application asks): one cheap expression.
  IF ds IS NULL OR coalesce(pg_has_role(who, to_regrole('memflow_app'), 'USAGE'), false)
     OR memflow.reads_every_dataset(who) THEN
    RETURN ds;
  END IF;
  IF pg_has_role(session_user, who, 'MEMBER') AND EXISTS (
       SELECT 1 FROM memflow.dataset_reader r JOIN pg_roles g ON g.rolname = r.role_name
       WHERE r.dataset_id = ds AND pg_has_role(who, g.oid, 'MEMBER')) THEN
    RETURN ds;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION memflow.readable_dataset(name) IS
  'The dataset bound to this transaction (memflow.dataset_id) if the role may read it, else NULL: every dataset policy keys on it.';

CREATE FUNCTION memflow.granted_datasets(who name) RETURNS uuid[]
LANGUAGE sql STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(array_agg(DISTINCT r.dataset_id), '{}')
  FROM memflow.dataset_reader r JOIN pg_roles g ON g.rolname = r.role_name
  WHERE pg_has_role(session_user, who, 'MEMBER') AND pg_has_role(who, g.oid, 'MEMBER')
$$;
COMMENT ON FUNCTION memflow.granted_datasets(name) IS
  'The datasets granted to the role or to a role it belongs to (memflow db grant-reader).';

-- The grants are read by the functions above as the owner; memflow_app stays bound by the policy.
ALTER TABLE memflow.dataset_reader NO FORCE ROW LEVEL SECURITY;

ALTER POLICY dataset_isolation ON memflow.document
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.chunk
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.node
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.edge
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.node_source
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.edge_source
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.node_chunk
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.episode_summary
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.facet_search_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.facet_anchor_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.facetpoint_search_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.entity_name
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.edge_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.change_log
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.procedure_summary
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.procedure_step_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.procedure_context_text
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));
ALTER POLICY dataset_isolation ON memflow.entitytype_name
  USING (dataset_id = (SELECT memflow.readable_dataset(current_user)))
  WITH CHECK (dataset_id = (SELECT memflow.readable_dataset(current_user)));

-- The directory: every name for the owner and memflow_app (to resolve --dataset NAME), the
-- granted ones for anyone else.
ALTER POLICY dataset_directory ON memflow.dataset
  USING ((SELECT memflow.reads_every_dataset(current_user))
         OR id = ANY ((SELECT memflow.granted_datasets(current_user))::uuid[]));

-- What a reader may read: the schema, and SELECT on every table and view but the grants, the
-- store's settings and Alembic's table. Called by grant_reader and below; revisions that add a
-- relation grant it to the existing readers the same way.
CREATE FUNCTION memflow.grant_reader_access(reader text) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  rel record;
BEGIN
  EXECUTE format('GRANT USAGE ON SCHEMA memflow TO %I', reader);
  FOR rel IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'memflow' AND c.relkind IN ('r', 'v')
               AND c.relname NOT IN ('dataset_reader', 'store_meta', 'alembic_version')
             ORDER BY 1
  LOOP
    EXECUTE format('GRANT SELECT ON memflow.%I TO %I', rel.relname, reader);
  END LOOP;
END $$;
REVOKE EXECUTE ON FUNCTION memflow.grant_reader_access(text) FROM PUBLIC;
COMMENT ON FUNCTION memflow.grant_reader_access(text) IS
  'Give a reader SELECT on the graph''s tables and views (no grants, settings or writes).';

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
  INSERT INTO memflow.dataset_reader (dataset_id, role_name) VALUES (ds, reader)
  ON CONFLICT DO NOTHING;
  PERFORM memflow.grant_reader_access(reader);
  RETURN ds;
END $$;

-- Binds the session when its login may read the dataset. A reader is told the same for a dataset
-- it was not granted and for one that does not exist: the names of others' datasets stay unknown.
CREATE OR REPLACE FUNCTION memflow.use_dataset(dataset_name text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ds uuid;
  every boolean := memflow.reads_every_dataset(session_user);
BEGIN
  SELECT id INTO ds FROM memflow.dataset WHERE name = dataset_name;
  IF ds IS NOT NULL AND (every OR ds = ANY (memflow.granted_datasets(session_user))) THEN
    PERFORM set_config('memflow.dataset_id', ds::text, false);
    RETURN format('this session reads dataset %s', dataset_name);
  END IF;
  IF every THEN
    RAISE EXCEPTION 'memflow: no dataset %', quote_literal(dataset_name)
      USING ERRCODE = 'no_data_found', HINT = 'list the datasets: SELECT name FROM memflow.dataset';
  END IF;
  RAISE EXCEPTION 'memflow: role % may not read dataset % (or it does not exist)',
    quote_ident(session_user), quote_literal(dataset_name)
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'SELECT name FROM memflow.dataset lists yours; the store owner grants others: memflow db grant-reader ROLE --dataset NAME';
END $$;

-- Readers granted before this revision held SELECT on every table (and, if a DBA added them,
-- perhaps more): every role holding SELECT on memflow.node, other than the owner, memflow_app
-- and their members, keeps exactly what a reader holds now.
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
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA memflow FROM %I', r.role_name);
    PERFORM memflow.grant_reader_access(r.role_name);
  END LOOP;
END $$;

-- After a write that is large next to what the planner knows of the graph, memflow_app refreshes
-- the statistics inside the write's transaction (memflow.store.writer.refresh_statistics), so
-- the statements that follow in it do not plan on stale ones. ANALYZE needs MAINTAIN
-- (PostgreSQL 17+; older servers rely on autovacuum).
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 170000
     AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    EXECUTE 'GRANT MAINTAIN ON memflow.node, memflow.node_chunk, memflow.chunk, memflow.edge, '
            'memflow.node_source, memflow.edge_source, memflow.facetpoint_search_text TO memflow_app';
  END IF;
END $$;
