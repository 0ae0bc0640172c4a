-- Procedural memory: versions, listing and procedural recall. Every statement is scoped by
-- :dataset_id (and by row-level security).

-- name: procedure_versions
-- Every stored version of the given keys (versions of one procedure share canonical_name).
SELECT id, canonical_name, name, status, coalesce((props ->> 'version')::integer, 1) AS version
FROM memflow.node
WHERE dataset_id = :dataset_id AND kind = 'Procedure' AND canonical_name = ANY(:keys);

-- name: procedure_lock
-- Serialises writers of one procedure key (held until the transaction ends).
SELECT pg_advisory_xact_lock(hashtextextended(:lock_key, 0));

-- name: procedure_settle
-- The document's procedures (:ids) are the current versions of their keys; every other current
-- version of those keys is superseded (also one a concurrent writer committed meanwhile).
UPDATE memflow.node
SET status = CASE WHEN id = ANY(:ids) THEN 'current' ELSE 'superseded' END, updated_at = now()
WHERE dataset_id = :dataset_id AND kind = 'Procedure' AND canonical_name = ANY(:keys)
  AND ((id = ANY(:ids) AND status <> 'current') OR (id <> ALL(:ids) AND status = 'current'));

-- name: procedure_restore_current
-- After a forget: a superseded version nothing supersedes any more is current again.
UPDATE memflow.node n SET status = 'current', updated_at = now()
WHERE n.dataset_id = :dataset_id AND n.kind = 'Procedure' AND n.status = 'superseded'
  AND NOT EXISTS (SELECT 1 FROM memflow.edge e
                   WHERE e.dataset_id = n.dataset_id AND e.dst = n.id
                     AND e.relationship = 'supersedes')
RETURNING n.id;

-- name: procedure_list
-- The procedures of the dataset (memflow procedures): current ones, or every version.
SELECT id, name, summary, status, version, steps, context, episode_id, superseded_by, created_at
FROM memflow.procedures
WHERE dataset_id = :dataset_id AND (:all_versions OR status = 'current')
ORDER BY name, version DESC
LIMIT :limit;

-- name: procedure_recall
-- Procedural recall: the :k nearest summaries, steps and context points of current procedures,
-- each row with its procedure (a step or a context point reaches it through its edge).
WITH hits AS (
  (SELECT 'Procedure_summary' AS collection, s.node_id AS procedure_id, s.text,
          s.embedding <=> CAST(:q AS vector) AS distance
     FROM memflow.procedure_summary s WHERE s.dataset_id = :dataset_id
      AND (NOT :filtered OR s.node_id = ANY(CAST(:visible_nodes AS uuid[])))
    ORDER BY s.embedding <=> CAST(:q AS vector) LIMIT :k)
  UNION ALL
  (SELECT 'Procedure_step_text', k.src, s.text, s.embedding <=> CAST(:q AS vector)
     FROM memflow.procedure_step_text s
     JOIN memflow.edge k ON k.dataset_id = s.dataset_id AND k.dst = s.node_id
                        AND k.relationship = 'has_key_point'
    WHERE s.dataset_id = :dataset_id
      AND (NOT :filtered OR s.node_id = ANY(CAST(:visible_nodes AS uuid[])))
    ORDER BY s.embedding <=> CAST(:q AS vector) LIMIT :k)
  UNION ALL
  (SELECT 'Procedure_context_text', k.src, s.text, s.embedding <=> CAST(:q AS vector)
     FROM memflow.procedure_context_text s
     JOIN memflow.edge k ON k.dataset_id = s.dataset_id AND k.dst = s.node_id
                        AND k.relationship = 'has_context_point'
    WHERE s.dataset_id = :dataset_id
      AND (NOT :filtered OR s.node_id = ANY(CAST(:visible_nodes AS uuid[])))
    ORDER BY s.embedding <=> CAST(:q AS vector) LIMIT :k)
)
SELECT h.collection, h.procedure_id, h.text, h.distance
FROM hits h JOIN memflow.node p ON p.dataset_id = :dataset_id AND p.id = h.procedure_id
WHERE p.status = 'current'
  AND (NOT :filtered OR p.id = ANY(CAST(:visible_nodes AS uuid[])));

-- name: procedure_details
-- The given procedures with their steps in order, their episode and the chunks of their steps
-- ([chunk key, document id, document source, chunk ts], first chunk first).
SELECT v.id, v.name, v.summary, v.status, v.version, v.steps, v.context, v.episode_id,
       ARRAY(SELECT json_build_array(c.key, c.document_id, d.source, c.ts)
               FROM memflow.edge k
               JOIN memflow.node_chunk nc ON nc.dataset_id = k.dataset_id AND nc.node_id = k.dst
               JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
               JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
              WHERE k.dataset_id = v.dataset_id AND k.src = v.id
                AND k.relationship = 'has_key_point'
                AND (NOT :filtered OR c.document_id = ANY(CAST(:visible_documents AS uuid[])))
              ORDER BY c.idx LIMIT :max_sources) AS sources
FROM memflow.procedures v
WHERE v.dataset_id = :dataset_id AND v.id = ANY(:ids);
