-- Revision 0004 downgrade: drops what 0004_temporal.sql created. The views go back to their 0001
-- definitions (a view cannot lose columns in place), with the comments and grants they had.

DROP VIEW memflow.facet_points;
DROP VIEW memflow.facets;
DROP VIEW memflow.episodes;
DROP TABLE memflow.change_log;
DROP INDEX memflow.document_source_idx;
DROP INDEX memflow.node_superseded_by_idx;
ALTER TABLE memflow.document DROP COLUMN replaced_by, DROP COLUMN previous_id, DROP COLUMN version;
ALTER TABLE memflow.edge DROP COLUMN superseded_by, DROP COLUMN invalid_at, DROP COLUMN recorded_at,
  DROP COLUMN valid_at;
ALTER TABLE memflow.node DROP COLUMN superseded_by, DROP COLUMN invalid_at, DROP COLUMN recorded_at,
  DROP COLUMN valid_at;

CREATE VIEW memflow.episodes WITH (security_invoker = true) AS
SELECT d.name AS dataset, n.id, n.name, n.summary, n.status, n.memory_type,
       n.time_start, n.time_end, n.time_text, n.created_at, n.updated_at, n.dataset_id
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
WHERE n.kind = 'Episode';

CREATE VIEW memflow.facets WITH (security_invoker = true) AS
SELECT d.name AS dataset, e.src AS episode_id, n.id, n.facet_type, n.search_text, n.anchor_text,
       n.description, n.time_start, n.time_end, n.created_at, n.dataset_id
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
LEFT JOIN memflow.edge e ON e.dataset_id = n.dataset_id AND e.dst = n.id AND e.relationship = 'has_facet'
WHERE n.kind = 'Facet';

CREATE VIEW memflow.facet_points WITH (security_invoker = true) AS
SELECT d.name AS dataset, e.src AS facet_id, n.id, n.search_text, n.description,
       ARRAY(SELECT c.key FROM memflow.node_chunk nc JOIN memflow.chunk c
               ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
             WHERE nc.dataset_id = n.dataset_id AND nc.node_id = n.id ORDER BY c.idx) AS sources,
       n.created_at, n.dataset_id
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
LEFT JOIN memflow.edge e ON e.dataset_id = n.dataset_id AND e.dst = n.id AND e.relationship = 'has_point'
WHERE n.kind = 'FacetPoint';

COMMENT ON VIEW memflow.episodes IS 'Episodes: one bounded event each, with its summary and mentioned time.';
COMMENT ON VIEW memflow.facets IS 'Facets: one aspect of an episode; search_text is the short handle, anchor_text the detail.';
COMMENT ON VIEW memflow.facet_points IS 'FacetPoints: atomic facts of a facet, with the keys of the chunks (turns, sentences) that support them.';
COMMENT ON COLUMN memflow.episodes.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.episodes.id IS 'The episode''s node id (memflow.node.id).';
COMMENT ON COLUMN memflow.episodes.name IS 'The episode''s title.';
COMMENT ON COLUMN memflow.episodes.summary IS 'What happened, in a few sentences.';
COMMENT ON COLUMN memflow.episodes.status IS 'Lifecycle status, if given.';
COMMENT ON COLUMN memflow.episodes.memory_type IS 'The kind of memory (event, conversation, document, ...).';
COMMENT ON COLUMN memflow.episodes.time_start IS 'Start of the time the row is about (mentioned or inferred), if known.';
COMMENT ON COLUMN memflow.episodes.time_end IS 'End of the time the row is about, if known.';
COMMENT ON COLUMN memflow.episodes.time_text IS 'The time as the text mentioned it.';
COMMENT ON COLUMN memflow.episodes.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.episodes.updated_at IS 'When the row last changed (a merge updates episodes).';
COMMENT ON COLUMN memflow.episodes.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facet_points.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.facet_points.facet_id IS 'The facet the point belongs to.';
COMMENT ON COLUMN memflow.facet_points.id IS 'The point''s node id.';
COMMENT ON COLUMN memflow.facet_points.search_text IS 'The atomic statement (embedded).';
COMMENT ON COLUMN memflow.facet_points.description IS 'Longer free text, not embedded.';
COMMENT ON COLUMN memflow.facet_points.sources IS 'Keys of the chunks (turns, sentences) that support the point.';
COMMENT ON COLUMN memflow.facet_points.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.facet_points.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';
COMMENT ON COLUMN memflow.facets.dataset IS 'The dataset name (memflow.dataset.name); filter on it.';
COMMENT ON COLUMN memflow.facets.episode_id IS 'The episode (memflow.node.id of kind Episode).';
COMMENT ON COLUMN memflow.facets.id IS 'The facet''s node id.';
COMMENT ON COLUMN memflow.facets.facet_type IS 'The kind of aspect (plan, constraint, decision, fact, ...).';
COMMENT ON COLUMN memflow.facets.search_text IS 'The short handle of the aspect (embedded).';
COMMENT ON COLUMN memflow.facets.anchor_text IS 'The detailed text of the aspect (embedded).';
COMMENT ON COLUMN memflow.facets.description IS 'Longer free text, not embedded.';
COMMENT ON COLUMN memflow.facets.time_start IS 'Start of the time the row is about (mentioned or inferred), if known.';
COMMENT ON COLUMN memflow.facets.time_end IS 'End of the time the row is about, if known.';
COMMENT ON COLUMN memflow.facets.created_at IS 'When the row was written.';
COMMENT ON COLUMN memflow.facets.dataset_id IS 'The dataset (tenant) of the row; row-level security shows only the bound one.';

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON memflow.episodes, memflow.facets, memflow.facet_points
      TO memflow_app;
  END IF;
END $$;
