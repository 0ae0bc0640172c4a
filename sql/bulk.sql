-- Bulk import: write many documents in one transaction with index and constraint maintenance
-- deferred to the end (the way pg_restore loads data before it builds indexes and constraints).
-- HNSW inserts cost ~1-3 ms per row, building the index afterwards ~0.3 ms; per-row foreign-key
-- triggers cost about as much as the inserts, re-adding the constraint checks all rows in one
-- query. Everything happens in one transaction: other sessions wait for it, nobody sees a
-- table without its index, and a failure rolls back the data and the DDL together.

-- name: bulk_tables
-- Every memflow table, in a fixed order (the lock order).
SELECT format('%I.%I', n.nspname, c.relname) AS name
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'memflow' AND c.relkind = 'r' AND c.relname <> 'alembic_version'
ORDER BY c.relname;

-- name: bulk_foreign_keys
SELECT format('%I.%I', n.nspname, t.relname) AS table_name, quote_ident(c.conname) AS name,
       pg_get_constraintdef(c.oid) AS definition
FROM pg_constraint c
JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE c.contype = 'f' AND n.nspname = 'memflow' AND t.relname <> 'dataset'
ORDER BY t.relname, c.conname;

-- name: bulk_vector_indexes
SELECT format('%I.%I', n.nspname, ic.relname) AS name, pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = ic.relnamespace
JOIN pg_am am ON am.oid = ic.relam
WHERE n.nspname = 'memflow' AND am.amname = 'hnsw'
ORDER BY ic.relname;
