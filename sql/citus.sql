-- The Citus layout (memflow.db.citus, docs/scale-out.md): what the catalog says about how each
-- table of the memflow schema can be distributed by dataset_id.

-- name: citus_tables
-- Every table of the schema, and whether it has the distribution column.
SELECT c.relname AS table_name,
       EXISTS (SELECT 1 FROM pg_attribute a
               WHERE a.attrelid = c.oid AND a.attname = 'dataset_id' AND NOT a.attisdropped)
         AS has_dataset_id
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'memflow' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY 1;

-- name: citus_keys
-- Primary keys, unique constraints and unique indexes (kind 'p', 'u', 'i') and foreign keys
-- ('f'): their table, first column, and for a foreign key the referenced table and its first
-- referenced column.
SELECT c.relname AS table_name, con.conname AS name, con.contype::text AS kind,
       a.attname AS first_column, rc.relname AS ref_table, ra.attname AS ref_first_column
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = con.conkey[1]
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
LEFT JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = con.confkey[1]
WHERE n.nspname = 'memflow' AND con.contype IN ('p', 'u', 'f')
UNION ALL
SELECT c.relname, ic.relname, 'i', a.attname, NULL, NULL
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
WHERE n.nspname = 'memflow' AND i.indisunique
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
ORDER BY 1, 2;

-- name: citus_reference_table
-- Templates of the calls memflow.db.citus.layout_sql prints (run on a Citus coordinator).
SELECT create_reference_table(:table);

-- name: citus_distributed_table
-- :colocate is 'default' for the first table (memflow.db.citus.ANCHOR), then that table.
SELECT create_distributed_table(:table, 'dataset_id', colocate_with => :colocate);
