-- Scopes and metadata filters (revision 0006). Every statement is scoped by :dataset_id.

-- name: visible_rows
-- A filtered search's first statement: the documents whose scope contains the given one (JSON,
-- '{}' for any) and whose metadata passes the search's where condition, then what they support:
-- the nodes (node_source) and the texts of the edges (edge_source). The recall statements keep
-- only these rows (sql/recall.sql: the filtered parameter). The where condition is compiled by
-- memflow.db.filters and replaces the marked `true` below; in it every key and value is a bind
-- parameter (w0, w1, ...) over d.metadata.
WITH docs AS MATERIALIZED (
  SELECT d.id FROM memflow.document d
  WHERE d.dataset_id = :dataset_id AND d.scope @> CAST(:scope AS jsonb)
    AND /*where*/ true
)
SELECT ARRAY(SELECT id FROM docs) AS documents,
       ARRAY(SELECT DISTINCT s.node_id FROM memflow.node_source s
              WHERE s.dataset_id = :dataset_id AND s.document_id IN (SELECT id FROM docs))
         AS nodes,
       ARRAY(SELECT DISTINCT e.text_hash FROM memflow.edge_source s
               JOIN memflow.edge e ON e.dataset_id = s.dataset_id AND e.id = s.edge_id
              WHERE s.dataset_id = :dataset_id AND s.document_id IN (SELECT id FROM docs))
         AS edge_texts;

-- name: result_documents
-- The scope and metadata of the documents (:ids) that rows fetched without their documents cite
-- (procedures, baseline units). An episodic search reads its documents with its graph
-- (sql/recall.sql: the `document` rows of `project` and `expand_points`).
SELECT d.id, d.scope, d.metadata
FROM memflow.document d
WHERE d.dataset_id = :dataset_id AND d.id = ANY(CAST(:ids AS uuid[]));
