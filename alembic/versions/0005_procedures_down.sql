-- Revision 0005 downgrade: procedures and entity types go (0003 has no place for them), with
-- what 0005_procedures.sql created. Episodes, facets, points and entities stay as they were.

DROP VIEW memflow.procedures;
DROP TABLE memflow.procedure_summary, memflow.procedure_step_text,
  memflow.procedure_context_text, memflow.entitytype_name;

-- Row-level security applies to the owner too (FORCE): lift it while removing every dataset's
-- rows of the new kinds. Their edges and provenance go with them (ON DELETE CASCADE).
ALTER TABLE memflow.node NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_text NO FORCE ROW LEVEL SECURITY;
DELETE FROM memflow.node
WHERE kind IN ('EntityType', 'Procedure', 'ProcedureContextPoint', 'ProcedureStepPoint');
DELETE FROM memflow.edge
WHERE relationship NOT IN ('has_facet', 'has_point', 'involves_entity', 'same_entity_as');
DELETE FROM memflow.edge_text t
WHERE NOT EXISTS (SELECT 1 FROM memflow.edge e
                   WHERE e.dataset_id = t.dataset_id AND e.text_hash = t.text_hash);
ALTER TABLE memflow.node FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge FORCE ROW LEVEL SECURITY;
ALTER TABLE memflow.edge_text FORCE ROW LEVEL SECURITY;

DROP INDEX memflow.node_entitytype_canonical_idx;
DROP INDEX memflow.node_procedure_key_idx;
ALTER TABLE memflow.node DROP CONSTRAINT node_kind_check;
ALTER TABLE memflow.node ADD CONSTRAINT node_kind_check
  CHECK (kind IN ('Episode', 'Facet', 'FacetPoint', 'Entity'));
ALTER TABLE memflow.edge DROP CONSTRAINT edge_relationship_check;
ALTER TABLE memflow.edge ADD CONSTRAINT edge_relationship_check
  CHECK (relationship IN ('has_facet', 'has_point', 'involves_entity', 'same_entity_as'));

COMMENT ON COLUMN memflow.node.kind IS 'Episode | Facet | FacetPoint | Entity';
COMMENT ON COLUMN memflow.node.canonical_name IS 'Entity: NFKC, casefolded, punctuation removed; unique per dataset.';
COMMENT ON COLUMN memflow.node.status IS 'Episode: lifecycle status (e.g. active), if given.';
COMMENT ON COLUMN memflow.node.props IS 'Free-form JSON properties of the node.';
COMMENT ON COLUMN memflow.edge.relationship IS 'has_facet | has_point | involves_entity | same_entity_as';
