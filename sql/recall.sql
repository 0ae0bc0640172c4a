-- Search. Every statement is scoped by :dataset_id (and by row-level security).

-- name: bind_search
-- The one setup statement of a search transaction: bind the dataset (RLS) and let filtered HNSW
-- scans continue until LIMIT rows of this dataset are found (pgvector >= 0.8 iterative scan).
-- Always plan with the actual values: psycopg prepares a statement after 5 runs and PostgreSQL then
-- may switch to a generic plan, which for the projection (ids and dataset unknown) is ~10x slower
-- (benchmarks/scale.py measured 100-150 ms -> 900-1200 ms from the 11th search on a connection).
-- It also says whether recall sorts the dataset's rows exactly instead of scanning the HNSW
-- indexes: when the dataset holds at most exact_nodes nodes (counted no further) and at most
-- the share exact_share of the store's nodes (the planner's estimate). An HNSW scan filtered to
-- a small share of a shared index skips the other datasets' rows and then costs more than
-- sorting a few thousand (benchmarks/exact_recall.py). The count comes after the set_config
-- calls, so it runs with the dataset bound (row-level security).
SELECT set_config('memflow.dataset_id', :dataset_id, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', :ef_search, true),
       set_config('plan_cache_mode', 'force_custom_plan', true),
       (SELECT n.held <= :exact_nodes AND n.held <= :exact_share * greatest(c.reltuples, n.held)
          FROM (SELECT count(*) AS held
                  FROM (SELECT 1 FROM memflow.node WHERE dataset_id = CAST(:dataset_id AS uuid)
                         LIMIT :exact_nodes + 1) d) n,
               pg_class c
         WHERE c.oid = 'memflow.node'::regclass) AS exact;

-- name: recall
-- Wide vector recall: the :k nearest rows of every per-field embedding table, in one round trip.
-- Each branch orders by the distance to the same query vector so the HNSW index is used; for a
-- small dataset (exact, from bind_search) by an expression no index matches: an exact sort. The
-- branch orders by its own output column, so each row's distance is computed once (ordered by an
-- expression of its own, a scan computed it twice: ~4,200 distances more a search, issue 28).
-- A filtered search (scope / where: memflow.recall.visibility) keeps only the visible rows in
-- every branch; unfiltered (:filtered false), the condition folds away at planning.
-- A last row (NULL collection) says whether the dataset holds any replaced node (revision 0004:
-- searches of datasets without one skip validity), so that costs no round trip of its own, and
-- carries the dataset's graph revision (revision 0009; NULL: none yet) and, with
-- :point_distances, every FacetPoint's distance to the query in node id order (one bytea of
-- float8send's 8 bytes a distance: exact, with no text to print here and parse in Python, 1.9 ->
-- 1.1 ms on 1,334 points and 0.45 ms of parsing less; the input comes sorted, so the aggregate
-- sorts nothing): with the graph cached at that revision (memflow.recall.graphcache), an
-- unfiltered search projects and expands with no statement.
WITH hits AS (
(SELECT 'Episode_summary' AS collection, node_id, NULL::bytea AS text_hash, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.episode_summary WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY distance LIMIT :k)
UNION ALL
(SELECT 'Facet_search_text', node_id, NULL, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.facet_search_text WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY distance LIMIT :k)
UNION ALL
(SELECT 'Facet_anchor_text', node_id, NULL, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY distance LIMIT :k)
UNION ALL
(SELECT 'FacetPoint_search_text', node_id, NULL, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY distance LIMIT :k)
UNION ALL
(SELECT 'Entity_name', node_id, NULL, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.entity_name WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY distance LIMIT :k)
UNION ALL
(SELECT 'Edge_text', NULL, text_hash, text,
        CASE WHEN :exact THEN (embedding <=> CAST(:q AS vector)) + 0
             ELSE embedding <=> CAST(:q AS vector) END AS distance
   FROM memflow.edge_text WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR text_hash = ANY(CAST(:visible_texts AS bytea[])))
  ORDER BY distance LIMIT :k)
)
SELECT h.collection, h.node_id, h.text_hash, h.text, h.distance, NULL::boolean AS any_superseded,
       NULL::bigint AS revision, NULL::bytea AS point_distances
FROM hits h
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL,
       EXISTS (SELECT 1 FROM memflow.node WHERE dataset_id = :dataset_id
                 AND superseded_by IS NOT NULL),
       (SELECT revision FROM memflow.graph_revision WHERE dataset_id = :dataset_id),
       CASE WHEN :point_distances THEN
         (SELECT string_agg(float8send(p.distance), ''::bytea ORDER BY p.node_id)
            FROM (SELECT node_id, embedding <=> CAST(:q AS vector) AS distance
                    FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id
                   ORDER BY node_id) p)
       END;

-- name: project
-- Graph projection: from the hit ids (:ids, best first) up to 2 hops towards their episodes,
-- inside the dataset. Only the edges bundle scoring can use are followed, child -> parent:
-- FacetPoint -> Facet (has_point), Facet -> Episode (has_facet), Entity -> Facet/Episode
-- (involves_entity). Episodes have no parents on these edges, so Episode hits (:leaves) and nodes
-- reached through has_facet are not looked up. Hub guard: each node contributes at most :fanout
-- parents, hits first, then by edge text (content: the same store gives the same subgraph in any
-- dataset; the id only orders edges with identical texts). Every reached node carries the rank of the best hit it
-- was reached from; the cap (:max_nodes) keeps whole chains of the best hits (rank, then depth).
-- Rows: the kept nodes ('node'), the walked edges between kept nodes ('edge'), and the documents
-- of the results ('document': scope, metadata, created_at; `sourced_episode` when it is a source
-- of a kept Episode without provenance), so a search reads them in no statement of its own. Provenance
-- (`sources`: [chunk key, document id, document source, chunk ts] per chunk, first chunk first;
-- returned as the JSON text, parsed only for the nodes a response cites: GraphNode.sources)
-- is read for all kept nodes from their stored citations (revision 0008): for FacetPoints (up to
-- :max_sources chunks, and the first chunk's speaker, for the unit rules), an Episode's first
-- chunk, and for Facets only when :with_sources (evidence units). An Entity carries its degree, the episodes and facets
-- linking to it (counted up to :degree_cap; above :fanout it is a hub), and every Entity row the
-- dataset's episode count (computed once): entity specificity.
-- Filtered (:filtered), seeds, parents, provenance, an entity's degree and the episode count
-- are only the visible nodes and documents: an entity two scopes share leads only to the
-- episodes the search may see, and ranks as if the rest of the dataset were not there.
-- Node columns are named after GraphNode's fields (memflow/recall/types.py), read by name; each
-- node row also carries its times and validity and the write path's restates / restated_by links
-- (what `node_times` in sql/temporal.sql reads), so a search needs no statement for them.
WITH
seed AS (
  SELECT id, ord, id = ANY(CAST(:leaves AS uuid[])) AS leaf
  FROM unnest(CAST(:ids AS uuid[])) WITH ORDINALITY AS s(id, ord)
  WHERE NOT :filtered OR id = ANY(CAST(:visible_nodes AS uuid[]))
),
-- The walk, one level per hop (2 hops: no recursion needed). Each node's parents are ranked once
-- for all the walk rows that reach it (a window over the edges into the level, not a sorted
-- index lookup per row).
up1 AS (
  SELECT e.src, e.relationship, e.dst, e.edge_text,
         row_number() OVER (PARTITION BY e.dst
                            ORDER BY (hit.id IS NOT NULL) DESC, e.text_hash, e.src)
           AS rn
  FROM memflow.edge e LEFT JOIN seed hit ON hit.id = e.src
  WHERE e.dataset_id = :dataset_id
    AND e.dst IN (SELECT id FROM seed WHERE NOT leaf)
    AND e.relationship IN ('has_point', 'has_facet', 'involves_entity')
    AND (NOT :filtered OR e.src = ANY(CAST(:visible_nodes AS uuid[])))
),
lvl1 AS (
  SELECT DISTINCT u.src AS node_id, 1 AS depth, s.ord, u.relationship = 'has_facet' AS is_episode,
         u.src, u.relationship, u.dst, u.edge_text
  FROM seed s JOIN up1 u ON u.dst = s.id AND u.rn <= :fanout
  WHERE NOT s.leaf
),
up2 AS (
  SELECT e.src, e.relationship, e.dst, e.edge_text,
         row_number() OVER (PARTITION BY e.dst
                            ORDER BY (hit.id IS NOT NULL) DESC, e.text_hash, e.src)
           AS rn
  FROM memflow.edge e LEFT JOIN seed hit ON hit.id = e.src
  WHERE e.dataset_id = :dataset_id
    AND e.dst IN (SELECT node_id FROM lvl1 WHERE NOT is_episode)
    AND e.relationship IN ('has_point', 'has_facet', 'involves_entity')
    AND (NOT :filtered OR e.src = ANY(CAST(:visible_nodes AS uuid[])))
),
lvl2 AS (
  SELECT DISTINCT u.src AS node_id, 2 AS depth, w.ord, u.relationship = 'has_facet' AS is_episode,
         u.src, u.relationship, u.dst, u.edge_text
  FROM lvl1 w JOIN up2 u ON u.dst = w.node_id AND u.rn <= :fanout
  WHERE NOT w.is_episode
),
walk AS (
  SELECT id AS node_id, 0 AS depth, ord, leaf AS is_episode, NULL::uuid AS src,
         NULL::text AS relationship, NULL::uuid AS dst, NULL::text AS edge_text
  FROM seed
  UNION ALL SELECT * FROM lvl1
  UNION ALL SELECT * FROM lvl2
),
kept_ids AS (
  SELECT node_id FROM walk
  GROUP BY node_id
  ORDER BY min(ord), min(depth), node_id
  LIMIT :max_nodes
),
kept AS (
  SELECT n.id, n.kind, n.name, n.summary, n.search_text, n.anchor_text, n.description,
         n.facet_type, n.created_at, n.time_start, n.time_end, n.display_only,
         n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by,
         n.props -> 'restates' AS restates, n.props -> 'restated_by' AS restated_by,
         n.citations, n.speaker
  FROM kept_ids k JOIN memflow.node n ON n.dataset_id = :dataset_id AND n.id = k.node_id
),
-- Provenance of every kept node: an Episode's first chunk, a FacetPoint's (and with
-- :with_sources a Facet's) first :max_sources, with the first chunk's speaker. Unfiltered, the
-- nodes' stored citations (revision 0008, memflow.store.citations: the same rows in the same
-- order, written with the node's citations); filtered, only chunks of visible documents count,
-- so the citations are joined (over the set, not a lookup per node) and numbered.
cites AS (
  SELECT k.id AS node_id, k.kind, c.key, c.idx, c.id AS chunk_id, c.document_id, d.source, c.ts,
         c.speaker,
         row_number() OVER (PARTITION BY k.id ORDER BY c.idx, c.id) AS rn
  FROM kept k
  JOIN memflow.node_chunk nc ON nc.dataset_id = :dataset_id AND nc.node_id = k.id
  JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
  JOIN memflow.document d ON d.dataset_id = :dataset_id AND d.id = c.document_id
  WHERE :filtered
    AND (k.kind IN ('FacetPoint', 'Episode') OR (:with_sources AND k.kind = 'Facet'))
    AND c.document_id = ANY(CAST(:visible_documents AS uuid[]))
),
prov AS (
  SELECT c.node_id,
         jsonb_agg(jsonb_build_array(c.key, c.document_id, c.source, c.ts)
                   ORDER BY c.idx, c.chunk_id) AS sources,
         (array_agg(c.speaker ORDER BY c.idx, c.chunk_id))[1] AS speaker
  FROM (SELECT * FROM cites
         WHERE rn <= CASE WHEN kind = 'Episode' THEN 1 ELSE :max_sources END
         ORDER BY node_id, idx, chunk_id) c
  WHERE :filtered  -- (again here: unfiltered, the branch is dropped before it is planned)
  GROUP BY c.node_id
  UNION ALL
  SELECT k.id,
         CASE WHEN k.kind = 'Episode' THEN jsonb_build_array(k.citations -> 0)
              WHEN jsonb_array_length(k.citations) <= :max_sources THEN k.citations
              ELSE jsonb_path_query_array(k.citations, '$[0 to $last]',
                                          jsonb_build_object('last', :max_sources - 1))
         END,
         k.speaker
  FROM kept k
  WHERE NOT :filtered AND k.citations IS NOT NULL
    AND (k.kind IN ('FacetPoint', 'Episode') OR (:with_sources AND k.kind = 'Facet'))
),
-- The documents of the results (what `result_documents` in sql/filters.sql returned in a
-- statement of its own): those the provenance cites, and the source documents of the kept
-- Episodes without provenance (written from drafts: no chunks), visible ones only when filtered.
sourced AS (
  SELECT s.node_id, s.document_id
  FROM kept k JOIN memflow.node_source s ON s.dataset_id = :dataset_id AND s.node_id = k.id
  WHERE k.kind = 'Episode' AND NOT EXISTS (SELECT 1 FROM prov p WHERE p.node_id = k.id)
    AND (NOT :filtered OR s.document_id = ANY(CAST(:visible_documents AS uuid[])))
),
docs AS (
  SELECT d.id, d.scope, d.metadata, d.created_at, e.node_id AS sourced_episode
  FROM memflow.document d
  LEFT JOIN sourced e ON e.document_id = d.id
  WHERE d.dataset_id = :dataset_id
    AND (d.id IN (SELECT CAST(jsonb_array_elements(p.sources) ->> 1 AS uuid) FROM prov p)
         OR d.id IN (SELECT document_id FROM sourced))
)
SELECT 'node' AS row_type, k.id, k.kind, coalesce(k.name, '') AS name, k.summary, k.search_text,
       k.anchor_text, k.description, k.facet_type, k.created_at, k.time_start, k.time_end,
       k.display_only,
       CAST(coalesce(src.sources, '[]'::jsonb) AS text) AS sources,
       CASE WHEN k.kind = 'FacetPoint' THEN src.speaker END AS speaker,
       CASE WHEN k.kind = 'Entity' THEN
         (SELECT count(*) FROM (SELECT 1 FROM memflow.edge e
                                 WHERE e.dataset_id = :dataset_id AND e.dst = k.id
                                   AND (NOT :filtered
                                        OR e.src = ANY(CAST(:visible_nodes AS uuid[])))
                                 LIMIT greatest(:degree_cap, :fanout + 1)) d)
       END AS degree,
       CASE WHEN k.kind = 'Entity' THEN
         (SELECT count(*) FROM memflow.node n
           WHERE n.dataset_id = :dataset_id AND n.kind = 'Episode'
             AND (NOT :filtered OR n.id = ANY(CAST(:visible_nodes AS uuid[]))))
       END AS episode_count,
       k.valid_at, k.recorded_at, k.invalid_at, k.superseded_by, k.restates, k.restated_by,
       NULL::uuid AS src, NULL::text AS relationship, NULL::uuid AS dst, NULL::text AS edge_text,
       NULL::jsonb AS scope, NULL::jsonb AS metadata, NULL::uuid AS sourced_episode
FROM kept k
LEFT JOIN prov src ON src.node_id = k.id
UNION ALL
SELECT DISTINCT 'edge', NULL::uuid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL::timestamptz,
       NULL::timestamptz, NULL::timestamptz, NULL::boolean, NULL::text,
       NULL::text, NULL::bigint, NULL::bigint,
       NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::uuid, NULL::jsonb, NULL::jsonb,
       w.src, w.relationship, w.dst, w.edge_text, NULL::jsonb, NULL::jsonb, NULL::uuid
FROM walk w
WHERE w.depth > 0
  AND w.src IN (SELECT node_id FROM kept_ids) AND w.dst IN (SELECT node_id FROM kept_ids)
UNION ALL
SELECT 'document', d.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, d.created_at,
       NULL::timestamptz, NULL::timestamptz, NULL::boolean, NULL::text,
       NULL::text, NULL::bigint, NULL::bigint,
       NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::uuid, NULL::jsonb, NULL::jsonb,
       NULL::uuid, NULL::text, NULL::uuid, NULL::text, d.scope, d.metadata, d.sourced_episode
FROM docs d;

-- name: graph_load
-- What `project` and `expand_points` read of an unfiltered dataset, all of it, for
-- memflow.recall.graphcache to walk in memory, with the revision it was read at. Nothing
-- (one 'size' row) when the dataset holds more than :budget nodes. Rows: 'size' (revision,
-- episode count), 'node' (the columns `project` returns, `sources` cut to :max_sources as it cuts
-- them, `cited`: whether it has citations, `documents`: those its cut sources cite, `degree`:
-- every edge into it), 'edge' (the links the walk follows, with text_hash: its order), 'point'
-- (the FacetPoints with an embedding, node id order: the recall's point_distances), 'document',
-- 'source' (an Episode's source documents: node_source).
WITH size AS (
  SELECT (SELECT count(*) FROM (SELECT 1 FROM memflow.node WHERE dataset_id = :dataset_id
                                 LIMIT :budget + 1) n) <= :budget AS fits,
         (SELECT revision FROM memflow.graph_revision WHERE dataset_id = :dataset_id) AS revision
),
nodes AS (
  SELECT n.id, n.kind, coalesce(n.name, '') AS name, n.summary, n.search_text, n.anchor_text,
         n.description, n.facet_type, n.created_at, n.time_start, n.time_end, n.display_only,
         CASE WHEN n.citations IS NULL THEN NULL
              WHEN n.kind = 'Episode' THEN jsonb_build_array(n.citations -> 0)
              WHEN jsonb_array_length(n.citations) <= :max_sources THEN n.citations
              ELSE jsonb_path_query_array(n.citations, '$[0 to $last]',
                                          jsonb_build_object('last', :max_sources - 1))
         END AS cut,
         n.speaker, n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by,
         n.props -> 'restates' AS restates, n.props -> 'restated_by' AS restated_by
  FROM memflow.node n
  WHERE n.dataset_id = :dataset_id AND (SELECT fits FROM size)
)
SELECT 'size' AS row_type, NULL::uuid AS id, NULL::text AS kind, NULL::text AS name,
       NULL::text AS summary, NULL::text AS search_text, NULL::text AS anchor_text,
       NULL::text AS description, NULL::text AS facet_type, NULL::timestamptz AS created_at,
       NULL::timestamptz AS time_start, NULL::timestamptz AS time_end,
       NULL::boolean AS display_only, NULL::text AS sources, NULL::text AS speaker,
       NULL::bigint AS degree, NULL::timestamptz AS valid_at, NULL::timestamptz AS recorded_at,
       NULL::timestamptz AS invalid_at, NULL::uuid AS superseded_by, NULL::jsonb AS restates,
       NULL::jsonb AS restated_by, NULL::boolean AS cited, NULL::uuid[] AS documents,
       NULL::uuid AS src, NULL::text AS relationship, NULL::uuid AS dst, NULL::text AS edge_text,
       NULL::bytea AS text_hash, NULL::jsonb AS scope, NULL::jsonb AS metadata,
       s.revision, CASE WHEN s.fits THEN (SELECT count(*) FROM memflow.node
                                           WHERE dataset_id = :dataset_id AND kind = 'Episode')
                   END AS episode_count
FROM size s
UNION ALL
SELECT 'node', n.id, n.kind, n.name, n.summary, n.search_text, n.anchor_text, n.description,
       n.facet_type, n.created_at, n.time_start, n.time_end, n.display_only,
       CAST(coalesce(n.cut, '[]'::jsonb) AS text), n.speaker,
       (SELECT count(*) FROM memflow.edge e WHERE e.dataset_id = :dataset_id AND e.dst = n.id),
       n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by, n.restates, n.restated_by,
       n.cut IS NOT NULL,
       ARRAY(SELECT CAST(c ->> 1 AS uuid) FROM jsonb_array_elements(n.cut) c),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM nodes n
UNION ALL
SELECT 'edge', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       e.src, e.relationship, e.dst, e.edge_text, e.text_hash, NULL, NULL, NULL, NULL
FROM memflow.edge e
WHERE e.dataset_id = :dataset_id AND (SELECT fits FROM size)
  AND e.relationship IN ('has_point', 'has_facet', 'involves_entity')
UNION ALL
SELECT 'point', p.node_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM memflow.facetpoint_search_text p
WHERE p.dataset_id = :dataset_id AND (SELECT fits FROM size)
UNION ALL
SELECT 'document', d.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, d.created_at, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, d.scope, d.metadata, NULL, NULL
FROM memflow.document d
WHERE d.dataset_id = :dataset_id AND (SELECT fits FROM size)
UNION ALL
SELECT 'source', s.document_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       s.node_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM memflow.node_source s
WHERE s.dataset_id = :dataset_id AND (SELECT fits FROM size);

-- name: expand
-- Detail display only: the children of the chosen episodes (facets, their points, entities) with
-- the linking edges, so the rendered tree is complete. One extra round trip, after scoring.
WITH eps AS (
  SELECT id FROM unnest(CAST(:episode_ids AS uuid[])) AS s(id)
),
lvl1 AS (
  SELECT e.src, e.relationship, e.dst, e.edge_text
  FROM memflow.edge e JOIN eps ON e.src = eps.id
  WHERE e.dataset_id = :dataset_id AND e.relationship IN ('has_facet', 'involves_entity')
    AND (NOT :filtered OR e.dst = ANY(CAST(:visible_nodes AS uuid[])))
),
lvl2 AS (
  SELECT e.src, e.relationship, e.dst, e.edge_text
  FROM memflow.edge e JOIN lvl1 ON e.src = lvl1.dst AND lvl1.relationship = 'has_facet'
  WHERE e.dataset_id = :dataset_id AND e.relationship = 'has_point'
    AND (NOT :filtered OR e.dst = ANY(CAST(:visible_nodes AS uuid[])))
),
links AS (SELECT * FROM lvl1 UNION ALL SELECT * FROM lvl2)
SELECT 'node' AS row_type, n.id, n.kind, coalesce(n.name, '') AS name, n.summary, n.search_text,
       n.anchor_text, n.description, n.facet_type, n.created_at, n.time_start, n.time_end,
       n.display_only, '[]'::jsonb AS sources,
       NULL::text AS speaker, NULL::bigint AS degree, NULL::bigint AS episode_count,
       n.valid_at, n.recorded_at, n.invalid_at, n.superseded_by,
       n.props -> 'restates' AS restates, n.props -> 'restated_by' AS restated_by,
       NULL::uuid AS src, NULL::text AS relationship, NULL::uuid AS dst, NULL::text AS edge_text
FROM memflow.node n
WHERE n.dataset_id = :dataset_id AND n.id IN (SELECT dst FROM links)
UNION ALL
SELECT 'edge', NULL::uuid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL::timestamptz,
       NULL::timestamptz, NULL::timestamptz, NULL::boolean, NULL::jsonb,
       NULL::text, NULL::bigint, NULL::bigint,
       NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::uuid, NULL::jsonb, NULL::jsonb,
       l.src, l.relationship, l.dst, l.edge_text
FROM links l;

-- name: expand_points
-- highly_related only, after scoring: the FacetPoints of the best episodes (:episode_ids) that the
-- wide recall did not return (:known), each with its exact distance to the query, its two links
-- (episode -> facet, facet -> point) and its provenance (as in `project`: the stored citations
-- unless filtered, as JSON text), so the context can draw on the whole of the episodes the evidence chose;
-- then ('document' rows, as in `project`) the documents their provenance cites.
WITH pts AS (
SELECT p.id, p.kind, coalesce(p.name, '') AS name, p.summary, p.search_text, p.anchor_text,
       p.description, p.facet_type, p.created_at, p.time_start, p.time_end, p.display_only,
       coalesce(CASE WHEN :filtered THEN src.sources ELSE cut.sources END, '[]'::jsonb)
         AS sources,
       CASE WHEN :filtered THEN src.speaker ELSE p.speaker END AS speaker,
       CASE WHEN :filtered THEN src.documents
            ELSE ARRAY(SELECT CAST(e ->> 1 AS uuid) FROM jsonb_array_elements(cut.sources) e)
       END AS documents,
       p.valid_at, p.recorded_at, p.invalid_at, p.superseded_by,
       p.props -> 'restates' AS restates, p.props -> 'restated_by' AS restated_by,
       hf.src AS episode_id, hf.dst AS facet_id, hf.edge_text AS facet_edge_text,
       hp.edge_text AS point_edge_text,
       fp.embedding <=> CAST(:q AS vector) AS distance
FROM memflow.edge hf
JOIN memflow.edge hp ON hp.dataset_id = hf.dataset_id AND hp.src = hf.dst
                    AND hp.relationship = 'has_point'
JOIN memflow.node p ON p.dataset_id = hp.dataset_id AND p.id = hp.dst
JOIN memflow.facetpoint_search_text fp ON fp.dataset_id = p.dataset_id AND fp.node_id = p.id
CROSS JOIN LATERAL (
  SELECT CASE WHEN jsonb_array_length(p.citations) <= :max_sources THEN p.citations
              ELSE jsonb_path_query_array(p.citations, '$[0 to $last]',
                                          jsonb_build_object('last', :max_sources - 1))
         END AS sources
) cut
LEFT JOIN LATERAL (
  SELECT jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts) ORDER BY c.idx, c.id)
           AS sources,
         (array_agg(c.speaker ORDER BY c.idx, c.id))[1] AS speaker,
         array_agg(c.document_id) AS documents
  FROM (SELECT c.key, c.idx, c.id, c.document_id, c.ts, c.speaker
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
         WHERE nc.dataset_id = :dataset_id AND nc.node_id = p.id
           AND (NOT :filtered OR c.document_id = ANY(CAST(:visible_documents AS uuid[])))
         ORDER BY c.idx, c.id LIMIT :max_sources) c
  JOIN memflow.document d ON d.dataset_id = :dataset_id AND d.id = c.document_id
) src ON :filtered
WHERE hf.dataset_id = :dataset_id AND hf.relationship = 'has_facet'
  AND hf.src = ANY(CAST(:episode_ids AS uuid[]))
  AND NOT (hp.dst = ANY(CAST(:known AS uuid[])))
  AND (NOT :filtered OR (hp.dst = ANY(CAST(:visible_nodes AS uuid[]))
                         AND hf.dst = ANY(CAST(:visible_nodes AS uuid[]))))
)
SELECT 'node' AS row_type, id, kind, name, summary, search_text, anchor_text, description,
       facet_type, created_at, time_start, time_end, display_only,
       CAST(sources AS text) AS sources, speaker,
       NULL::bigint AS degree, valid_at, recorded_at, invalid_at, superseded_by, restates,
       restated_by, episode_id, facet_id, facet_edge_text, point_edge_text, distance,
       NULL::jsonb AS scope, NULL::jsonb AS metadata, NULL::uuid AS sourced_episode
FROM pts
UNION ALL
SELECT 'document', d.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, d.created_at, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       d.scope, d.metadata, NULL
FROM memflow.document d
WHERE d.dataset_id = :dataset_id
  AND d.id IN (SELECT unnest(documents) FROM pts);

-- name: vector_units
-- Baseline: plain ANN over FacetPoint and Facet texts, each unit with its episode and its
-- provenance (as in `project`).
WITH hits AS (
  (SELECT 'FacetPoint_search_text' AS collection, node_id, text, embedding <=> CAST(:q AS vector) AS distance
     FROM memflow.facetpoint_search_text WHERE dataset_id = :dataset_id
    AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
    ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
  UNION ALL
  (SELECT 'Facet_anchor_text', node_id, text, embedding <=> CAST(:q AS vector)
     FROM memflow.facet_anchor_text WHERE dataset_id = :dataset_id AND :include_facets
      AND (NOT :filtered OR node_id = ANY(CAST(:visible_nodes AS uuid[])))
    ORDER BY embedding <=> CAST(:q AS vector) LIMIT :k)
)
SELECT h.collection, h.node_id, h.text, h.distance, ep.id AS episode_id, ep.name AS episode_name,
       ep.time_start, ep.created_at,
       coalesce(src.sources, '[]'::jsonb) AS sources, src.speaker
FROM hits h
LEFT JOIN LATERAL (
  SELECT jsonb_agg(jsonb_build_array(c.key, c.document_id, d.source, c.ts) ORDER BY c.idx)
           AS sources,
         (array_agg(c.speaker ORDER BY c.idx))[1] AS speaker
  FROM (SELECT c.key, c.idx, c.document_id, c.ts, c.speaker
          FROM memflow.node_chunk nc
          JOIN memflow.chunk c ON c.dataset_id = nc.dataset_id AND c.id = nc.chunk_id
         WHERE nc.dataset_id = :dataset_id AND nc.node_id = h.node_id
           AND (NOT :filtered OR c.document_id = ANY(CAST(:visible_documents AS uuid[])))
         ORDER BY c.idx LIMIT :max_sources) c
  JOIN memflow.document d ON d.dataset_id = :dataset_id AND d.id = c.document_id
) src ON true
LEFT JOIN LATERAL (
  SELECT n.id, n.name, n.time_start, n.created_at
  FROM memflow.edge hp
  JOIN memflow.edge hf ON hf.dataset_id = hp.dataset_id AND hf.relationship = 'has_facet'
                      AND hf.dst = CASE WHEN h.collection = 'Facet_anchor_text' THEN h.node_id ELSE hp.src END
  JOIN memflow.node n ON n.dataset_id = hf.dataset_id AND n.id = hf.src
  WHERE hp.dataset_id = :dataset_id
    AND (NOT :filtered OR (n.id = ANY(CAST(:visible_nodes AS uuid[]))
                           AND hf.dst = ANY(CAST(:visible_nodes AS uuid[]))))
    AND ((h.collection = 'FacetPoint_search_text' AND hp.relationship = 'has_point' AND hp.dst = h.node_id)
      OR (h.collection = 'Facet_anchor_text' AND hp.relationship = 'has_facet' AND hp.dst = h.node_id))
  ORDER BY n.id LIMIT 1
) ep ON true
ORDER BY h.distance, h.node_id
LIMIT :k;

-- name: lexical_units
-- Postgres full-text search over chunks ('simple' config: any language), with trigram
-- similarity for scripts without spaces (CJK); each chunk with the episode it supports and its
-- document (provenance).
WITH q AS (
  SELECT to_tsquery('simple', :tsquery) AS tsq
),
hits AS (
  SELECT c.id, c.key, c.idx, c.text, c.document_id, c.ts,
         greatest(ts_rank_cd(c.tsv, q.tsq, 32), CASE WHEN :trigram THEN similarity(c.text, :raw) ELSE 0 END) AS rank
  FROM memflow.chunk c, q
  WHERE c.dataset_id = :dataset_id
    AND (NOT :filtered OR c.document_id = ANY(CAST(:visible_documents AS uuid[])))
    AND (c.tsv @@ q.tsq OR (:trigram AND c.text % :raw))
  ORDER BY rank DESC, c.id
  LIMIT :k
)
SELECT h.id AS chunk_id, h.key, h.text, h.rank, ep.id AS episode_id, ep.name AS episode_name,
       ep.time_start, ep.created_at, pt.id AS point_id,
       h.document_id, d.source AS document_source, h.ts
FROM hits h
JOIN memflow.document d ON d.dataset_id = :dataset_id AND d.id = h.document_id
LEFT JOIN LATERAL (
  SELECT n.id, n.name, n.time_start, n.created_at
  FROM memflow.node_chunk nc JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id
  WHERE nc.dataset_id = :dataset_id AND nc.chunk_id = h.id AND n.kind = 'Episode'
    AND (NOT :filtered OR n.id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY n.id LIMIT 1
) ep ON true
LEFT JOIN LATERAL (
  SELECT n.id FROM memflow.node_chunk nc JOIN memflow.node n ON n.dataset_id = nc.dataset_id AND n.id = nc.node_id
  WHERE nc.dataset_id = :dataset_id AND nc.chunk_id = h.id AND n.kind = 'FacetPoint'
    AND (NOT :filtered OR n.id = ANY(CAST(:visible_nodes AS uuid[])))
  ORDER BY n.id LIMIT 1
) pt ON true
ORDER BY h.rank DESC, h.id;
