-- The framework adapters (memflow/integrations/): LangGraph's store keeps each item as a document
-- whose metadata holds the item (memflow/integrations/items.py). Every statement is scoped by
-- :dataset_id, and reads only documents whose scope contains :scope (JSON, '{}' for any) and
-- whose metadata passes the marked `true`, a condition compiled by memflow.db.filters (every key
-- and value a bind parameter w0, w1, ...).

-- name: documents_where
-- The documents that pass the condition with their metadata, newest first by the metadata's
-- :order_key (an ISO timestamp), a page of them.
SELECT d.id, d.metadata
FROM memflow.document d
WHERE d.dataset_id = :dataset_id AND d.scope @> CAST(:scope AS jsonb)
  AND /*where*/ true
ORDER BY d.metadata ->> :order_key DESC, d.id
LIMIT :limit OFFSET :offset;

-- name: episode_documents_where
-- For each of the episodes (:episodes), the documents that support it and pass the condition.
SELECT s.node_id AS episode_id, d.id, d.metadata
FROM memflow.node_source s
JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
WHERE s.dataset_id = :dataset_id AND s.node_id = ANY(CAST(:episodes AS uuid[]))
  AND d.scope @> CAST(:scope AS jsonb)
  AND /*where*/ true
ORDER BY d.metadata ->> :order_key DESC, d.id;

-- name: metadata_values
-- The distinct values of the metadata key :key among the documents that pass the condition.
SELECT DISTINCT d.metadata -> :key AS value
FROM memflow.document d
WHERE d.dataset_id = :dataset_id AND d.scope @> CAST(:scope AS jsonb)
  AND jsonb_exists(d.metadata, :key) AND /*where*/ true;
