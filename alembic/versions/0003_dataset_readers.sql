-- Revision 0003: dataset readers. A role granted a dataset (memflow db grant-reader ROLE
-- --dataset NAME) binds its psql session with SELECT memflow.use_dataset('NAME'); row-level
-- security then shows it that dataset's rows. Other datasets are refused.

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
