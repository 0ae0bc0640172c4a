-- What the front doors (memflow.service) read beyond the Dataset API.

-- name: episode_documents
-- Provenance of an episode: the documents that support it, oldest first.
SELECT d.id, d.source, d.title, d.content_type, d.reference_time, d.created_at
FROM memflow.node_source s
JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
WHERE s.dataset_id = :dataset_id AND s.node_id = :node_id
ORDER BY d.created_at, d.id;

-- name: service_ping
SELECT 1;

-- name: set_statement_timeout
-- Run on each new connection of a server door (through the driver: psycopg's own parameter
-- style), so a runaway statement is cancelled and its transaction rolled back.
SELECT set_config('statement_timeout', %(ms)s, false);
