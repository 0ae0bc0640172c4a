-- psql views over the memflow graph (revision 0001). security_invoker: row-level security of the
-- querying role applies through the views.

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

CREATE VIEW memflow.entities WITH (security_invoker = true) AS
SELECT d.name AS dataset, n.id, n.name, n.canonical_name, n.entity_type, n.description,
       (SELECT count(*) FROM memflow.edge x
         WHERE x.dataset_id = n.dataset_id AND x.dst = n.id AND x.relationship = 'involves_entity') AS degree,
       n.created_at, n.dataset_id
FROM memflow.node n JOIN memflow.dataset d ON d.id = n.dataset_id
WHERE n.kind = 'Entity';

CREATE VIEW memflow.episode_tree WITH (security_invoker = true) AS
WITH rows AS (
    SELECT ep.dataset_id, ep.id AS episode_id, ep.name AS episode, 0 AS depth, 'Episode' AS kind,
           ep.name AS text, NULL::text AS edge_text, ep.name AS sort_key
    FROM memflow.node ep WHERE ep.kind = 'Episode'
  UNION ALL
    SELECT ep.dataset_id, ep.id, ep.name, 1, 'Facet', f.search_text, hf.edge_text,
           ep.name || chr(1) || '1' || f.search_text
    FROM memflow.node ep
    JOIN memflow.edge hf ON hf.dataset_id = ep.dataset_id AND hf.src = ep.id AND hf.relationship = 'has_facet'
    JOIN memflow.node f ON f.dataset_id = hf.dataset_id AND f.id = hf.dst
    WHERE ep.kind = 'Episode'
  UNION ALL
    SELECT ep.dataset_id, ep.id, ep.name, 2, 'FacetPoint', p.search_text, hp.edge_text,
           ep.name || chr(1) || '1' || f.search_text || chr(1) || p.search_text
    FROM memflow.node ep
    JOIN memflow.edge hf ON hf.dataset_id = ep.dataset_id AND hf.src = ep.id AND hf.relationship = 'has_facet'
    JOIN memflow.node f ON f.dataset_id = hf.dataset_id AND f.id = hf.dst
    JOIN memflow.edge hp ON hp.dataset_id = f.dataset_id AND hp.src = f.id AND hp.relationship = 'has_point'
    JOIN memflow.node p ON p.dataset_id = hp.dataset_id AND p.id = hp.dst
    WHERE ep.kind = 'Episode'
  UNION ALL
    SELECT ep.dataset_id, ep.id, ep.name, 1, 'Entity', en.name, ie.edge_text,
           ep.name || chr(1) || '2' || en.name
    FROM memflow.node ep
    JOIN memflow.edge ie ON ie.dataset_id = ep.dataset_id AND ie.src = ep.id AND ie.relationship = 'involves_entity'
    JOIN memflow.node en ON en.dataset_id = ie.dataset_id AND en.id = ie.dst
    WHERE ep.kind = 'Episode'
)
SELECT d.name AS dataset, r.episode_id,
       repeat('    ', r.depth) || CASE WHEN r.depth = 0 THEN '' ELSE '└─ ' END || r.kind || ': ' || r.text AS tree,
       r.edge_text, r.depth, r.kind, r.dataset_id
FROM rows r JOIN memflow.dataset d ON d.id = r.dataset_id
ORDER BY d.name, r.sort_key;

COMMENT ON SCHEMA memflow IS 'memflow: episodic memory for AI agents (Episodes, Facets, FacetPoints, Entities, typed edges, per-field embeddings).';
COMMENT ON VIEW memflow.episodes IS 'Episodes: one bounded event each, with its summary and mentioned time.';
COMMENT ON VIEW memflow.facets IS 'Facets: one aspect of an episode; search_text is the short handle, anchor_text the detail.';
COMMENT ON VIEW memflow.facet_points IS 'FacetPoints: atomic facts of a facet, with the keys of the chunks (turns, sentences) that support them.';
COMMENT ON VIEW memflow.entities IS 'Entities: one per (dataset, canonical_name), shared across episodes; degree = episodes and facets involving it.';
COMMENT ON VIEW memflow.episode_tree IS 'Each episode as an indented tree of facets, points and entities, with the edge text of each link. Filter by dataset.';
