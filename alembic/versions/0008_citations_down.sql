-- Revision 0008 downgrade: nodes lose their stored citations (search at 0007 reads them from
-- node_chunk, which keeps every citation).

ALTER TABLE memflow.node DROP COLUMN speaker, DROP COLUMN citations;
