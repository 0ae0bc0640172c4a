-- Bulk import: write many documents in one transaction with index and constraint maintenance
-- deferred to the end (the way pg_restore loads data before it builds indexes and constraints).
-- HNSW inserts cost ~1-3 ms per row, building the index afterwards ~0.3 ms; per-row foreign-key
-- triggers cost about as much as the inserts, re-adding the constraint checks all rows in one
-- query. Everything happens in one transaction: other sessions wait for it, nobody sees a
-- table without its index, and a failure rolls back the data and the DDL together.

-- The DDL names tables, constraints and indexes, so these statements generate it from the
-- catalog (in psql: run one, then \gexec executes the statements it returned).

-- name: bulk_login_role
SELECT current_user AS role;

-- name: bulk_reset_role
-- DDL runs as the session's login role (the owner of the schema), not memflow_app.
RESET ROLE;

-- name: bulk_set_role
SELECT set_config('role', :role, false);

-- name: bulk_lock_tables
-- Every memflow table in one LOCK, in a fixed order (by name).
SELECT format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
              string_agg(format('%I.%I', n.nspname, c.relname), ', ' ORDER BY c.relname)) AS statement
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'memflow' AND c.relkind = 'r' AND c.relname <> 'alembic_version';

-- name: bulk_foreign_keys
SELECT format('%I.%I', n.nspname, t.relname) AS table_name, quote_ident(c.conname) AS name,
       format('ALTER TABLE %I.%I DROP CONSTRAINT %I', n.nspname, t.relname, c.conname) AS drop_statement,
       format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', n.nspname, t.relname, c.conname,
              pg_get_constraintdef(c.oid)) AS add_statement
FROM pg_constraint c
JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE c.contype = 'f' AND n.nspname = 'memflow' AND t.relname <> 'dataset'
ORDER BY t.relname, c.conname;

-- name: bulk_vector_indexes
SELECT format('DROP INDEX %I.%I', n.nspname, ic.relname) AS drop_statement,
       pg_get_indexdef(i.indexrelid) AS create_statement
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = ic.relnamespace
JOIN pg_am am ON am.oid = ic.relam
WHERE n.nspname = 'memflow' AND am.amname = 'hnsw'
ORDER BY ic.relname;
