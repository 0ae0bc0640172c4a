-- Forget: remove a document (and what only it supported) or one episode. One transaction, bound
-- to the dataset. Provenance lives in node_source / edge_source (document -> node / edge).

-- name: forget_document_lock
SELECT id FROM memflow.document
WHERE dataset_id = :dataset_id AND id = :document_id
FOR UPDATE;

-- name: forget_document_nodes
SELECT node_id FROM memflow.node_source
WHERE dataset_id = :dataset_id AND document_id = :document_id;

-- name: forget_document_edges
SELECT edge_id FROM memflow.edge_source
WHERE dataset_id = :dataset_id AND document_id = :document_id;

-- name: forget_delete_chunks
-- node_chunk rows go with their chunks (ON DELETE CASCADE).
DELETE FROM memflow.chunk
WHERE dataset_id = :dataset_id AND document_id = ANY(:document_ids)
RETURNING id;

-- name: forget_delete_documents
-- node_source / edge_source rows of the documents go with them (ON DELETE CASCADE).
DELETE FROM memflow.document
WHERE dataset_id = :dataset_id AND id = ANY(:document_ids)
RETURNING id;

-- name: forget_delete_unsupported_nodes
-- Of the given nodes, those no document supports any more. Their edges, embeddings and
-- provenance rows go with them (ON DELETE CASCADE).
DELETE FROM memflow.node n
WHERE n.dataset_id = :dataset_id AND n.id = ANY(:ids)
  AND NOT EXISTS (SELECT 1 FROM memflow.node_source s
                   WHERE s.dataset_id = n.dataset_id AND s.node_id = n.id)
RETURNING n.id, n.kind;

-- name: forget_delete_unsupported_edges
DELETE FROM memflow.edge e
WHERE e.dataset_id = :dataset_id AND e.id = ANY(:ids)
  AND NOT EXISTS (SELECT 1 FROM memflow.edge_source s
                   WHERE s.dataset_id = e.dataset_id AND s.edge_id = e.id)
RETURNING e.id;

-- name: forget_count_edges
SELECT count(*) FROM memflow.edge
WHERE dataset_id = :dataset_id AND id = ANY(:ids);

-- name: forget_delete_unused_edge_texts
-- Edge texts are shared by text: keep a text while any edge of the dataset still has it.
DELETE FROM memflow.edge_text t
WHERE t.dataset_id = :dataset_id
  AND NOT EXISTS (SELECT 1 FROM memflow.edge e
                   WHERE e.dataset_id = t.dataset_id AND e.text_hash = t.text_hash)
RETURNING t.text_hash;

-- name: forget_merged_nodes
-- Of the given nodes, those a merge changed: their text is re-derived from what remains.
SELECT id, kind, summary, anchor_text, props, updated_at
FROM memflow.node
WHERE dataset_id = :dataset_id AND id = ANY(:ids) AND props ? 'merge';

-- name: forget_node_documents
SELECT node_id, document_id FROM memflow.node_source
WHERE dataset_id = :dataset_id AND node_id = ANY(:ids);

-- name: forget_episode_nodes
-- The episode, its facets and their points, the procedures laid out in it and their points.
SELECT n.id, n.kind FROM memflow.node n
WHERE n.dataset_id = :dataset_id AND n.id = :episode_id AND n.kind = 'Episode'
UNION
SELECT hf.dst, 'Facet' FROM memflow.edge hf
WHERE hf.dataset_id = :dataset_id AND hf.src = :episode_id AND hf.relationship = 'has_facet'
UNION
SELECT hp.dst, 'FacetPoint' FROM memflow.edge hf
JOIN memflow.edge hp ON hp.dataset_id = hf.dataset_id AND hp.src = hf.dst AND hp.relationship = 'has_point'
WHERE hf.dataset_id = :dataset_id AND hf.src = :episode_id AND hf.relationship = 'has_facet'
UNION
SELECT hp.dst, 'Procedure' FROM memflow.edge hp
WHERE hp.dataset_id = :dataset_id AND hp.src = :episode_id AND hp.relationship = 'has_procedure'
UNION
SELECT pp.dst, CASE pp.relationship WHEN 'has_key_point' THEN 'ProcedureStepPoint'
                                    ELSE 'ProcedureContextPoint' END
FROM memflow.edge hp
JOIN memflow.edge pp ON pp.dataset_id = hp.dataset_id AND pp.src = hp.dst
                    AND pp.relationship IN ('has_key_point', 'has_context_point')
WHERE hp.dataset_id = :dataset_id AND hp.src = :episode_id AND hp.relationship = 'has_procedure';

-- name: forget_involved_entities
-- Entities the given nodes involve, and the aliases (same_entity_as) of those entities.
WITH involved AS (
  SELECT DISTINCT ie.dst AS id FROM memflow.edge ie
  WHERE ie.dataset_id = :dataset_id AND ie.src = ANY(:ids) AND ie.relationship = 'involves_entity'
)
SELECT id, false AS alias FROM involved
UNION
SELECT CASE WHEN se.src = involved.id THEN se.dst ELSE se.src END, true
FROM memflow.edge se JOIN involved ON se.src = involved.id OR se.dst = involved.id
WHERE se.dataset_id = :dataset_id AND se.relationship = 'same_entity_as';

-- name: forget_node_edge_count
SELECT count(*) FROM memflow.edge
WHERE dataset_id = :dataset_id AND (src = ANY(:ids) OR dst = ANY(:ids));

-- name: forget_delete_nodes
DELETE FROM memflow.node
WHERE dataset_id = :dataset_id AND id = ANY(:ids)
RETURNING id, kind;

-- name: forget_delete_uninvolved_entities
-- Of the given entities, those no remaining episode or facet involves.
DELETE FROM memflow.node n
WHERE n.dataset_id = :dataset_id AND n.id = ANY(:ids) AND n.kind = 'Entity'
  AND NOT EXISTS (SELECT 1 FROM memflow.edge e
                   WHERE e.dataset_id = n.dataset_id AND e.dst = n.id
                     AND e.relationship = 'involves_entity')
RETURNING n.id, n.kind;

-- name: forget_delete_isolated_entities
-- Of the given alias entities, those left without any edge.
DELETE FROM memflow.node n
WHERE n.dataset_id = :dataset_id AND n.id = ANY(:ids) AND n.kind = 'Entity'
  AND NOT EXISTS (SELECT 1 FROM memflow.edge e
                   WHERE e.dataset_id = n.dataset_id AND (e.dst = n.id OR e.src = n.id))
RETURNING n.id, n.kind;

-- name: forget_unsupporting_documents
-- Of the given documents, those that no longer support any node.
SELECT d.id FROM memflow.document d
WHERE d.dataset_id = :dataset_id AND d.id = ANY(:document_ids)
  AND NOT EXISTS (SELECT 1 FROM memflow.node_source s
                   WHERE s.dataset_id = d.dataset_id AND s.document_id = d.id);
