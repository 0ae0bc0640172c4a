-- Connections and transactions: checks at open, the role row-level security applies to, and the
-- dataset each transaction is bound to.

-- name: pgvector_version
-- The installed pgvector, else the one the server could install (NULL: none).
SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'vector'),
                (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'))
       AS version;

-- name: bind_dataset
-- Bind the transaction to one dataset: the setting every row-level security policy keys on.
SELECT set_config('memflow.dataset_id', :dataset_id, true);

-- name: app_role_available
-- Run on each new connection (through the driver, so no parameters): can this login switch to
-- memflow_app (memflow.db.engine.APP_ROLE), the role row-level security applies to?
SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app')
       AND (pg_has_role(current_user, 'memflow_app', 'MEMBER')
            OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) AS available;

-- name: set_app_role
SET ROLE memflow_app;

-- name: client_check
-- Run on each new connection: a running statement checks every :interval_ms milliseconds that
-- its client is still connected, and stops when it is gone (a killed process), instead of
-- running on. PostgreSQL 14+; an older server has no such setting and skips it.
SELECT set_config('client_connection_check_interval', :interval_ms, false)
WHERE current_setting('server_version_num')::int >= 140000;

-- name: write_timeout
-- The statement timeout of the rest of this (write) transaction, in milliseconds ('0': none).
SELECT set_config('statement_timeout', :ms, true);
