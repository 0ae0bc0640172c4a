-- Revision 0003 downgrade: drops what 0003_dataset_readers.sql created. Roles keep the schema
-- and table privileges grant_reader gave them.

DROP FUNCTION memflow.use_dataset(text);
DROP FUNCTION memflow.grant_reader(text, text);
DROP TABLE memflow.dataset_reader;
