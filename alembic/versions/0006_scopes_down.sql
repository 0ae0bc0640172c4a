-- Revision 0006 downgrade: documents lose their scope and metadata (0005 has no place for them);
-- everything they produced stays, visible to every search as before.

DROP INDEX memflow.document_scope_idx;
ALTER TABLE memflow.document DROP CONSTRAINT document_metadata_check;
ALTER TABLE memflow.document DROP CONSTRAINT document_scope_check;
ALTER TABLE memflow.document DROP COLUMN metadata, DROP COLUMN scope;
