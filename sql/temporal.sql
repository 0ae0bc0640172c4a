-- Facts that change (revision 0004): supersession, corrections, history, document versions, and
-- what a search needs to know of validity. Every statement is scoped by :dataset_id.

-- name: supersede_candidates
-- Current FacetPoints each probed new point (:probe, of the document's new points :ids) may
-- replace, bounded: its :k nearest by embedding and the :k_speaker nearest of those its own
-- speaker said (:speakers, by the first chunk of each point), each row with the new point it is
-- a candidate for (for_id), its speaker and times; never one of :ids. A two-speaker chat's
-- same-speaker pool is half the dataset: it is ranked, never read whole.
WITH first_speaker AS (
  SELECT DISTINCT ON (nc.node_id) nc.node_id, c.speaker
  FROM memflow.chunk c
  JOIN memflow.node_chunk nc ON nc.dataset_id = c.dataset_id AND nc.chunk_id = c.id
  WHERE c.dataset_id = :dataset_id AND c.speaker = ANY(CAST(:speakers AS text[]))
  ORDER BY nc.node_id, c.idx
), new AS (
  SELECT p.node_id, p.embedding, s.speaker FROM memflow.facetpoint_search_text p
  LEFT JOIN first_speaker s ON s.node_id = p.node_id
  WHERE p.dataset_id = :dataset_id AND p.node_id = ANY(CAST(:probe AS uuid[]))
), own AS MATERIALIZED (
  SELECT o.node_id, o.embedding, s.speaker FROM first_speaker s
  JOIN memflow.facetpoint_search_text o ON o.dataset_id = :dataset_id AND o.node_id = s.node_id
  WHERE NOT (o.node_id = ANY(CAST(:ids AS uuid[])))
), pool AS (
  SELECT new.node_id AS for_id, nn.node_id FROM new CROSS JOIN LATERAL (
    SELECT o.node_id FROM memflow.facetpoint_search_text o
    WHERE o.dataset_id = :dataset_id AND o.node_id <> new.node_id
    ORDER BY o.embedding <=> new.embedding LIMIT :k) nn
  UNION
  SELECT new.node_id, sn.node_id FROM new CROSS JOIN LATERAL (
    SELECT own.node_id FROM own WHERE own.speaker = new.speaker
    ORDER BY own.embedding <=> new.embedding LIMIT :k_speaker) sn
)
SELECT pool.for_id, n.id, n.search_text AS text, n.recorded_at, n.valid_at, sp.speaker
FROM pool JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = pool.node_id
LEFT JOIN LATERAL (
  SELECT c.speaker FROM memflow.node_chunk nc
  JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
  WHERE nc.dataset_id = :dataset_id AND nc.node_id = n.id ORDER BY c.idx LIMIT 1) sp ON true
WHERE n.kind = 'FacetPoint' AND n.invalid_at IS NULL AND NOT (n.id = ANY(CAST(:ids AS uuid[])));

-- name: node_speakers
-- The speaker of each point's first chunk.
SELECT n.id, n.search_text AS text, n.recorded_at, n.valid_at, sp.speaker
FROM memflow.node n
LEFT JOIN LATERAL (
  SELECT c.speaker FROM memflow.node_chunk nc
  JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
  WHERE nc.dataset_id = :dataset_id AND nc.node_id = n.id ORDER BY c.idx LIMIT 1) sp ON true
WHERE n.dataset_id = :dataset_id AND n.id = ANY(CAST(:ids AS uuid[]));

-- name: supersede_node
-- Close a current node: it stopped holding at :invalid_at and :new replaced it. Its incoming
-- edges close with it. Returns the node when it was current (a no-op otherwise).
WITH closed AS (
  UPDATE memflow.node SET invalid_at = :invalid_at, superseded_by = :new, updated_at = now()
  WHERE dataset_id = :dataset_id AND id = :old AND invalid_at IS NULL AND id <> :new
  RETURNING id, search_text
), edges AS (
  UPDATE memflow.edge e SET invalid_at = :invalid_at, superseded_by = :new
  FROM closed WHERE e.dataset_id = :dataset_id AND e.dst = closed.id AND e.invalid_at IS NULL
)
SELECT id, search_text FROM closed;

-- name: change_log_insert
INSERT INTO memflow.change_log (dataset_id, node_id, document_id, action, reason, actor, detail)
VALUES (:dataset_id, :node_id, :document_id, :action, :reason, coalesce(:actor, SESSION_USER),
        CAST(:detail AS jsonb));

-- name: revive_orphaned
-- Nodes whose replacement is gone (forgotten) hold again; so do their incoming edges.
WITH revived AS (
  UPDATE memflow.node n SET invalid_at = NULL, superseded_by = NULL, updated_at = now()
  WHERE n.dataset_id = :dataset_id AND n.superseded_by IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM memflow.node s
                    WHERE s.dataset_id = n.dataset_id AND s.id = n.superseded_by)
  RETURNING n.id, n.superseded_by AS gone
), edges AS (
  UPDATE memflow.edge e SET invalid_at = NULL, superseded_by = NULL
  FROM revived WHERE e.dataset_id = :dataset_id AND e.dst = revived.id
)
SELECT id, gone FROM revived;

-- name: document_versions_repair
-- A forgotten newer version: its predecessor is current again.
UPDATE memflow.document d SET replaced_by = NULL
WHERE d.dataset_id = :dataset_id AND d.replaced_by IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM memflow.document x
                  WHERE x.dataset_id = d.dataset_id AND x.id = d.replaced_by)
RETURNING d.id;

-- name: document_current_of_source
-- The current version of a source (none replaced it yet), other than :id.
SELECT id, version, reference_time, created_at FROM memflow.document
WHERE dataset_id = :dataset_id AND source = :source AND replaced_by IS NULL AND id <> :id
  AND meta @> '{"versioned": true}'
  -- Revision 0006: a source is versioned within one scope (two users' notes.md are two files).
  AND scope = (SELECT d.scope FROM memflow.document d WHERE d.dataset_id = :dataset_id AND d.id = :id)
ORDER BY version DESC, created_at DESC LIMIT 1;

-- name: document_set_version
UPDATE memflow.document SET version = :version, previous_id = :previous_id
WHERE dataset_id = :dataset_id AND id = :id;

-- name: document_set_replaced
UPDATE memflow.document SET replaced_by = :replaced_by
WHERE dataset_id = :dataset_id AND id = :id;

-- name: document_only_nodes
-- Current nodes the previous version supported that the new version does not.
SELECT n.id, n.kind, n.search_text FROM memflow.node_source s
JOIN memflow.node n ON n.dataset_id = s.dataset_id AND n.id = s.node_id
WHERE s.dataset_id = :dataset_id AND s.document_id = :previous_id
  AND n.kind IN ('Episode', 'Facet', 'FacetPoint') AND n.invalid_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM memflow.node_source t
                  WHERE t.dataset_id = s.dataset_id AND t.node_id = s.node_id
                    AND t.document_id = :document_id);

-- name: document_list
SELECT id, source, title, content_type, version, previous_id, replaced_by, reference_time,
       created_at,
       CASE WHEN replaced_by IS NULL THEN 'current' ELSE 'replaced' END AS status
FROM memflow.document WHERE dataset_id = :dataset_id
ORDER BY source, version, created_at;

-- name: node_get
SELECT n.id, n.kind, n.name, n.search_text, n.description, n.valid_at, n.recorded_at,
       n.invalid_at, n.superseded_by,
       (SELECT e.src FROM memflow.edge e WHERE e.dataset_id = n.dataset_id AND e.dst = n.id
          AND e.relationship = 'has_point' ORDER BY e.src LIMIT 1) AS facet_id
FROM memflow.node n WHERE n.dataset_id = :dataset_id AND n.id = :id;

-- name: history_chain
-- Every version linked to :id through superseded_by, older and newer, with the change that closed
-- each (the latest change_log row per node).
WITH RECURSIVE back(id, depth) AS (
  SELECT CAST(:id AS uuid), 0
  UNION
  SELECT n.id, b.depth - 1 FROM memflow.node n JOIN back b ON n.superseded_by = b.id
  WHERE n.dataset_id = :dataset_id AND b.depth > -50
), fwd(id, depth) AS (
  SELECT CAST(:id AS uuid), 0
  UNION
  SELECT n.superseded_by, f.depth + 1 FROM memflow.node n JOIN fwd f ON n.id = f.id
  WHERE n.dataset_id = :dataset_id AND n.superseded_by IS NOT NULL AND f.depth < 50
), chain AS (SELECT id, min(depth) AS depth FROM (SELECT * FROM back UNION SELECT * FROM fwd) a GROUP BY id)
SELECT n.id, n.kind, coalesce(n.search_text, n.name) AS text, n.valid_at, n.recorded_at,
       n.invalid_at, n.superseded_by, n.created_at, chain.depth,
       s.recorded_at AS superseder_recorded_at, s.created_at AS superseder_created_at,
       cl.reason, cl.actor, cl.at AS changed_at, cl.action, cl.detail
FROM chain JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = chain.id
LEFT JOIN memflow.node s ON s.dataset_id = n.dataset_id AND s.id = n.superseded_by
LEFT JOIN LATERAL (
  SELECT c.reason, c.actor, c.at, c.action, c.detail FROM memflow.change_log c
  WHERE c.dataset_id = :dataset_id AND c.node_id = n.id AND c.action IN ('supersede', 'correct')
  ORDER BY c.at DESC LIMIT 1) cl ON true
ORDER BY n.recorded_at, chain.depth;

-- name: change_log_of
-- Every logged change of the given nodes (closures, reopenings, revivals), oldest first.
SELECT node_id, action, reason, actor, at, detail FROM memflow.change_log
WHERE dataset_id = :dataset_id AND node_id = ANY(CAST(:ids AS uuid[]))
ORDER BY at, action;

-- name: reopen_node
-- A closed node holds again (a wrong closure undone); so do the incoming edges closed with it.
-- The replacement it had is remembered in props.reopened_from.
WITH opened AS (
  UPDATE memflow.node
  SET invalid_at = NULL, superseded_by = NULL, updated_at = now(),
      props = jsonb_set(props, '{reopened_from}',
                        coalesce(props -> 'reopened_from', '[]'::jsonb)
                        || jsonb_build_array(CAST(:was AS text)))
  WHERE dataset_id = :dataset_id AND id = :id AND invalid_at IS NOT NULL
    AND superseded_by = :was
  RETURNING id, search_text
), edges AS (
  UPDATE memflow.edge e SET invalid_at = NULL, superseded_by = NULL
  FROM opened WHERE e.dataset_id = :dataset_id AND e.dst = opened.id AND e.superseded_by = :was
)
SELECT id, search_text FROM opened;

-- name: temporal_any
-- Does the dataset hold any closed node? (Searches of datasets without one skip validity.)
SELECT EXISTS (SELECT 1 FROM memflow.node WHERE dataset_id = :dataset_id
                 AND superseded_by IS NOT NULL) AS any_superseded;

-- name: temporal_nodes
-- Validity of nodes a search touched: closed ones, ones recorded after :as_of (by the sources'
-- dates) or written after :known_at (by the store's clock), ones that replaced another; Facets
-- and Episodes also count their points and how many were closed by then on both clocks (a
-- closure is written with its replacement: the replacement's created_at). A Facet or an Episode
-- was said when its first point was: a note merged into an episode written from a later one (two
-- e-mails under one subject) keeps its own date for :as_of.
SELECT n.id, n.kind, n.search_text, n.valid_at,
       least(n.recorded_at, pts.first_recorded) AS recorded_at, n.invalid_at, n.superseded_by,
       n.created_at, s.recorded_at AS superseder_recorded_at, s.search_text AS superseder_text,
       s.created_at AS superseder_created_at,
       EXISTS (SELECT 1 FROM memflow.node o WHERE o.dataset_id = n.dataset_id
                 AND o.superseded_by = n.id) AS supersedes,
       pts.total AS points, pts.closed AS closed_points
FROM memflow.node n
LEFT JOIN memflow.node s ON s.dataset_id = n.dataset_id AND s.id = n.superseded_by
LEFT JOIN LATERAL (
  SELECT count(*) AS total, min(p.recorded_at) AS first_recorded,
         count(*) FILTER (WHERE p.invalid_at IS NOT NULL AND p.invalid_at <= :as_of
                          AND coalesce(ps.recorded_at, p.invalid_at) <= :as_of
                          AND coalesce(ps.created_at, p.updated_at) <= :known_at) AS closed
  FROM memflow.edge hp
  JOIN memflow.node p ON p.dataset_id = hp.dataset_id AND p.id = hp.dst
  LEFT JOIN memflow.node ps ON ps.dataset_id = p.dataset_id AND ps.id = p.superseded_by
  WHERE hp.dataset_id = n.dataset_id AND hp.relationship = 'has_point'
    AND (hp.src = n.id OR hp.src IN (SELECT hf.dst FROM memflow.edge hf
                                      WHERE hf.dataset_id = n.dataset_id AND hf.src = n.id
                                        AND hf.relationship = 'has_facet'))
) pts ON n.kind IN ('Facet', 'Episode')
WHERE n.dataset_id = :dataset_id AND n.id = ANY(CAST(:ids AS uuid[]));

-- name: closed_points_of
-- The closed points under the given facets and episodes (to mark them in summaries).
SELECT DISTINCT p.id, p.search_text, p.invalid_at, p.superseded_by,
       s.recorded_at AS superseder_recorded_at, s.created_at AS superseder_created_at
FROM memflow.edge hp
JOIN memflow.node p ON p.dataset_id = hp.dataset_id AND p.id = hp.dst
LEFT JOIN memflow.node s ON s.dataset_id = p.dataset_id AND s.id = p.superseded_by
WHERE hp.dataset_id = :dataset_id AND hp.relationship = 'has_point' AND p.invalid_at IS NOT NULL
  AND (hp.src = ANY(CAST(:ids AS uuid[]))
       OR hp.src IN (SELECT hf.dst FROM memflow.edge hf WHERE hf.dataset_id = :dataset_id
                       AND hf.relationship = 'has_facet' AND hf.src = ANY(CAST(:ids AS uuid[]))));

-- name: node_times
-- The times and validity of a search's nodes, and the write path's links of each between
-- statements that give different values for one thing (memflow.store.conflicts).
SELECT id, valid_at, recorded_at, invalid_at, superseded_by,
       props -> 'restates' AS restates, props -> 'restated_by' AS restated_by
FROM memflow.node
WHERE dataset_id = :dataset_id AND id = ANY(CAST(:ids AS uuid[]));

-- name: replaced_by_any
-- Closed nodes that the given nodes replaced (a search with include_history shows the chain).
SELECT id, search_text, invalid_at, superseded_by FROM memflow.node
WHERE dataset_id = :dataset_id AND superseded_by = ANY(CAST(:ids AS uuid[]));

-- name: closed_edge_texts
-- Edge texts (of the given hashes) all of whose edges were closed by :as_of, in a closure the
-- store had written by :known_at.
SELECT e.text_hash FROM memflow.edge e
WHERE e.dataset_id = :dataset_id AND e.text_hash = ANY(:hashes)
GROUP BY e.text_hash
HAVING bool_and(e.invalid_at IS NOT NULL AND e.invalid_at <= :as_of
                AND coalesce((SELECT s.created_at FROM memflow.node s
                               WHERE s.dataset_id = e.dataset_id AND s.id = e.superseded_by),
                             e.invalid_at) <= :known_at);

-- name: supersede_neighbours
-- The :k current stored FacetPoints closest to a new point's vector (the model path's candidates).
SELECT n.id, n.search_text AS text, o.embedding <=> CAST(:q AS vector) AS distance
FROM memflow.facetpoint_search_text o
JOIN memflow.node n ON n.dataset_id = o.dataset_id AND n.id = o.node_id
WHERE o.dataset_id = :dataset_id AND n.invalid_at IS NULL
  AND NOT (o.node_id = ANY(CAST(:exclude AS uuid[])))
ORDER BY o.embedding <=> CAST(:q AS vector) LIMIT :k;

-- name: conflict_neighbours
-- The similarity path of supersession (memflow.store.conflicts): for each new point's vector
-- (:vectors, in order; i from 1), the :k nearest current stored FacetPoints at least
-- :min_similarity alike, from documents of the same scope, with their speaker, times and the
-- title of their first document (what a bare "Owner: X" line is about).
SELECT q.i, n.id, n.search_text AS text, n.recorded_at, n.valid_at, sp.speaker,
       1 - nn.distance AS similarity, dt.title
FROM unnest(CAST(:vectors AS vector[])) WITH ORDINALITY AS q(v, i)
CROSS JOIN LATERAL (
  SELECT o.node_id, o.embedding <=> q.v AS distance FROM memflow.facetpoint_search_text o
  WHERE o.dataset_id = :dataset_id ORDER BY o.embedding <=> q.v LIMIT :k) nn
JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = nn.node_id
LEFT JOIN LATERAL (
  SELECT c.speaker FROM memflow.node_chunk nc
  JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
  WHERE nc.dataset_id = :dataset_id AND nc.node_id = n.id ORDER BY c.idx LIMIT 1) sp ON true
LEFT JOIN LATERAL (
  SELECT d.title FROM memflow.node_source s
  JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
  WHERE s.dataset_id = :dataset_id AND s.node_id = n.id ORDER BY d.created_at LIMIT 1) dt ON true
WHERE n.kind = 'FacetPoint' AND n.invalid_at IS NULL AND 1 - nn.distance >= :min_similarity
  AND EXISTS (SELECT 1 FROM memflow.node_source s
              JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
              WHERE s.dataset_id = :dataset_id AND s.node_id = n.id
                AND d.scope = CAST(:scope AS jsonb));
