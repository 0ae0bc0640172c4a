-- Revision 0008: stored citations. An Episode, Facet or FacetPoint keeps what search reads of
-- its provenance on its own row: citations, [chunk key, document id, document source, chunk ts]
-- per chunk it cites, in chunk order, and speaker, its first chunk's speaker. The write path
-- (memflow.store.citations) refreshes both whenever a node's citations change (a write, an
-- import, a forgotten document); NULL: the node cites no chunk. Existing nodes are backfilled
-- here as the write path computes them (node_citations_refresh in sql/write.sql).

ALTER TABLE memflow.node ADD COLUMN citations jsonb, ADD COLUMN speaker text;
COMMENT ON COLUMN memflow.node.citations IS 'Episode, Facet, FacetPoint: the chunks it cites, [key, document id, document source, ts] each, in chunk order (NULL: none); kept by the write path.';
COMMENT ON COLUMN memflow.node.speaker IS 'Episode, Facet, FacetPoint: the speaker of its first cited chunk, if any; kept by the write path.';

UPDATE memflow.node n
   SET citations = p.citations, speaker = p.speaker
  FROM (SELECT nc.dataset_id, nc.node_id,
               jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts) ORDER BY c.idx, c.id)
                 AS citations,
               (array_agg(c.speaker ORDER BY c.idx, c.id))[1] AS speaker
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
          JOIN memflow.document d ON d.dataset_id = c.dataset_id AND d.id = c.document_id
         GROUP BY nc.dataset_id, nc.node_id) p
 WHERE n.dataset_id = p.dataset_id AND n.id = p.node_id
   AND n.kind IN ('Episode', 'Facet', 'FacetPoint');
