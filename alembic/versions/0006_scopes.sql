-- Revision 0006: scopes and metadata filters. A document carries its scope (any of user, agent,
-- session: free-form strings) and the caller's metadata (a JSON object, kept apart from memflow's
-- own bookkeeping in meta). Nodes, edges and embedding rows are not copied into: they inherit
-- both through node_source / edge_source, so a node two documents share is visible to either
-- document's scope, and forgetting a document needs no upkeep. Existing documents are unscoped
-- ('{}'), which the column default backfills.

ALTER TABLE memflow.document
  ADD COLUMN scope jsonb NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE memflow.document ADD CONSTRAINT document_scope_check
  CHECK (jsonb_typeof(scope) = 'object');
ALTER TABLE memflow.document ADD CONSTRAINT document_metadata_check
  CHECK (jsonb_typeof(metadata) = 'object');
COMMENT ON COLUMN memflow.document.scope IS 'Who the document belongs to: {"user", "agent", "session"} (any subset; {} = unscoped).';
COMMENT ON COLUMN memflow.document.metadata IS 'The caller''s JSON metadata, filtered by search(where=...).';
CREATE INDEX document_scope_idx ON memflow.document USING gin (scope jsonb_path_ops);
