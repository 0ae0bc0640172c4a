-- Revision 0004: facts that change. Every node and edge carries its event time (valid_at) and
-- its record time (recorded_at); a replaced fact is closed (invalid_at, superseded_by) instead of
-- deleted; documents re-memorised from the same source are versions of one another; and
-- memflow.change_log records every supersession, correction, revival and version with its actor.

ALTER TABLE memflow.node
  ADD COLUMN valid_at timestamptz,
  ADD COLUMN recorded_at timestamptz,
  ADD COLUMN invalid_at timestamptz,
  ADD COLUMN superseded_by uuid;
ALTER TABLE memflow.edge
  ADD COLUMN valid_at timestamptz,
  ADD COLUMN recorded_at timestamptz,
  ADD COLUMN invalid_at timestamptz,
  ADD COLUMN superseded_by uuid;
ALTER TABLE memflow.document
  ADD COLUMN version integer NOT NULL DEFAULT 1,
  ADD COLUMN previous_id uuid,
  ADD COLUMN replaced_by uuid;

-- Backfill as the owner: lift FORCE for these statements (row-level security would hide every
-- row from an unbound migration), then restore it.
ALTER TABLE memflow.node NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_chunk NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.chunk NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_source NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_source NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.document NO FORCE ROW LEVEL SECURITY;
-- Record time, as the writer stores it: from the first document that supported the node, a message
-- is learned when it is said (its chunk's time), else at the document's reference time, else when
-- the node was written.
UPDATE memflow.node n SET recorded_at = coalesce(
  (SELECT coalesce(
            (SELECT min(c.ts) FROM memflow.node_chunk nc
               JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
              WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id AND c.document_id = d.id),
            d.reference_time)
     FROM memflow.node_source s
     JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
    WHERE s.dataset_id = n.dataset_id AND s.node_id = n.id
    ORDER BY d.created_at, d.id LIMIT 1),
  n.created_at);
-- Event time: the node's own time span, else when it was learned (what the writer stores).
UPDATE memflow.node SET valid_at = coalesce(time_start, recorded_at);
-- A point without a time of its own happened when its episode did (memflow.store.temporal
-- stamp_times: a journal note's title date), through has_point and has_facet.
UPDATE memflow.node p SET valid_at = ep.time_start
FROM memflow.edge hp
JOIN memflow.edge hf ON hf.dataset_id = hp.dataset_id AND hf.dst = hp.src
                    AND hf.relationship = 'has_facet'
JOIN memflow.node ep ON ep.dataset_id = hf.dataset_id AND ep.id = hf.src AND ep.kind = 'Episode'
WHERE p.kind = 'FacetPoint' AND p.time_start IS NULL AND ep.time_start IS NOT NULL
  AND hp.dataset_id = p.dataset_id AND hp.dst = p.id AND hp.relationship = 'has_point';
-- An edge is learned with the first document that supported it, when its target was said there.
UPDATE memflow.edge e SET recorded_at = coalesce(
  (SELECT coalesce(
            (SELECT min(c.ts) FROM memflow.node_chunk nc
               JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
              WHERE nc.dataset_id = e.dataset_id AND nc.node_id = e.dst AND c.document_id = d.id),
            d.reference_time)
     FROM memflow.edge_source s
     JOIN memflow.document d ON d.dataset_id = s.dataset_id AND d.id = s.document_id
    WHERE s.dataset_id = e.dataset_id AND s.edge_id = e.id
    ORDER BY d.created_at, d.id LIMIT 1),
  e.created_at);
ALTER TABLE memflow.node FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_chunk FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.chunk FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.node_source FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_source FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.document FORCE ROW LEVEL SECURITY;

ALTER TABLE memflow.node ALTER COLUMN recorded_at SET DEFAULT now(),
  ALTER COLUMN recorded_at SET NOT NULL;
ALTER TABLE memflow.edge ALTER COLUMN recorded_at SET DEFAULT now(),
  ALTER COLUMN recorded_at SET NOT NULL;
CREATE INDEX node_superseded_by_idx ON memflow.node (dataset_id, superseded_by)
  WHERE superseded_by IS NOT NULL;
CREATE INDEX document_source_idx ON memflow.document (dataset_id, source);

CREATE TABLE memflow.change_log (
  dataset_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  node_id uuid,
  document_id uuid,
  action text NOT NULL,
  reason text NOT NULL,
  actor text NOT NULL DEFAULT SESSION_USER,
  at timestamptz NOT NULL DEFAULT now(),
  detail jsonb NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT change_log_pkey PRIMARY KEY (dataset_id, id),
  CONSTRAINT change_log_dataset_fk FOREIGN KEY (dataset_id)
    REFERENCES memflow.dataset (id) ON DELETE CASCADE,
  CONSTRAINT change_log_reason_check
    CHECK (reason IN ('document', 'rule', 'model', 'correction', 'forget'))
);
CREATE INDEX change_log_node_idx ON memflow.change_log (dataset_id, node_id);
ALTER TABLE memflow.change_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE memflow.change_log FORCE ROW LEVEL SECURITY;
CREATE POLICY dataset_isolation ON memflow.change_log
  USING (dataset_id = memflow.current_dataset())
  WITH CHECK (dataset_id = memflow.current_dataset());
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON memflow.change_log TO memflow_app;
  END IF;
END $$;

COMMENT ON TABLE memflow.change_log IS
  'Audit of every change to what is true: supersessions, corrections, revivals, document versions.';
COMMENT ON COLUMN memflow.change_log.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.change_log.id IS 'Change id, unique in the dataset.';
COMMENT ON COLUMN memflow.change_log.node_id IS 'The node (memflow.node.id) that changed, if any.';
COMMENT ON COLUMN memflow.change_log.document_id IS 'The document (memflow.document.id) that changed or caused the change, if any.';
COMMENT ON COLUMN memflow.change_log.action IS 'supersede | revive | correct | version | forget';
COMMENT ON COLUMN memflow.change_log.reason IS 'What decided it: document | rule | model | correction | forget';
COMMENT ON COLUMN memflow.change_log.actor IS 'Who made the change (the actor= argument, else the database login role).';
COMMENT ON COLUMN memflow.change_log.at IS 'When the change was written.';
COMMENT ON COLUMN memflow.change_log.detail IS 'Free-form JSON: the replacing node, texts, scores.';
COMMENT ON COLUMN memflow.node.valid_at IS 'Event time: when the fact began to hold (mentioned, or the time it was said), if known.';
COMMENT ON COLUMN memflow.node.recorded_at IS 'Record time: when memflow learned it (the message or document time, else the write time).';
COMMENT ON COLUMN memflow.node.invalid_at IS 'When the fact stopped holding (NULL: still valid).';
COMMENT ON COLUMN memflow.node.superseded_by IS 'The node that replaced this one (NULL: current).';
COMMENT ON COLUMN memflow.edge.valid_at IS 'Event time: when the fact began to hold (mentioned, or the time it was said), if known.';
COMMENT ON COLUMN memflow.edge.recorded_at IS 'Record time: when memflow learned it (the message or document time, else the write time).';
COMMENT ON COLUMN memflow.edge.invalid_at IS 'When the fact stopped holding (NULL: still valid).';
COMMENT ON COLUMN memflow.edge.superseded_by IS 'The node that replaced this one (NULL: current).';
COMMENT ON COLUMN memflow.document.version IS 'Version of the source: 1, then +1 each time an edited file from the same source is memorised.';
COMMENT ON COLUMN memflow.document.previous_id IS 'The previous version of this document (memflow.document.id), if any.';
COMMENT ON COLUMN memflow.document.replaced_by IS 'The newer version of this document, if any (NULL: current).';

-- psql users see validity: the views gain the four columns (appended; existing ones unchanged).
CREATE OR REPLACE VIEW memflow.episodes WITH (security_invoker = true) AS
SELECT d.name AS dataset, n.id, n.name, n.summary, n.status, n.memory_type,
       n.time_start, n.time_end, n.time_text, n.created_at, n.updated_at, n.dataset_id,
       n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
WHERE n.kind = 'Episode';

CREATE OR REPLACE VIEW memflow.facets WITH (security_invoker = true) AS
SELECT d.name AS dataset, e.src AS episode_id, n.id, n.facet_type, n.search_text, n.anchor_text,
       n.description, n.time_start, n.time_end, n.created_at, n.dataset_id,
       n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
LEFT JOIN memflow.edge e ON e.dataset_id = n.dataset_id AND e.dst = n.id AND e.relationship = 'has_facet'
WHERE n.kind = 'Facet';

CREATE OR REPLACE VIEW memflow.facet_points WITH (security_invoker = true) AS
SELECT d.name AS dataset, e.src AS facet_id, n.id, n.search_text, n.description,
       ARRAY(SELECT c.key FROM memflow.node_chunk nc JOIN memflow.chunk c
               ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
             WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id ORDER BY c.idx) AS sources,
       n.created_at, n.dataset_id,
       n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
LEFT JOIN memflow.edge e ON e.dataset_id = n.dataset_id AND e.dst = n.id AND e.relationship = 'has_point'
WHERE n.kind = 'FacetPoint';

COMMENT ON COLUMN memflow.episodes.valid_at IS 'Event time: when the fact began to hold (mentioned, or the time it was said), if known.';
COMMENT ON COLUMN memflow.episodes.recorded_at IS 'Record time: when memflow learned it (the message or document time, else the write time).';
COMMENT ON COLUMN memflow.episodes.invalid_at IS 'When the fact stopped holding (NULL: still valid).';
COMMENT ON COLUMN memflow.episodes.superseded_by IS 'The node that replaced this one (NULL: current).';
COMMENT ON COLUMN memflow.facets.valid_at IS 'Event time: when the fact began to hold (mentioned, or the time it was said), if known.';
COMMENT ON COLUMN memflow.facets.recorded_at IS 'Record time: when memflow learned it (the message or document time, else the write time).';
COMMENT ON COLUMN memflow.facets.invalid_at IS 'When the fact stopped holding (NULL: still valid).';
COMMENT ON COLUMN memflow.facets.superseded_by IS 'The node that replaced this one (NULL: current).';
COMMENT ON COLUMN memflow.facet_points.valid_at IS 'Event time: when the fact began to hold (mentioned, or the time it was said), if known.';
COMMENT ON COLUMN memflow.facet_points.recorded_at IS 'Record time: when memflow learned it (the message or document time, else the write time).';
COMMENT ON COLUMN memflow.facet_points.invalid_at IS 'When the fact stopped holding (NULL: still valid).';
COMMENT ON COLUMN memflow.facet_points.superseded_by IS 'The node that replaced this one (NULL: current).';
