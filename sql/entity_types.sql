-- Entity types (seed 003's EntityType): entities reached by their classification label.

-- name: entities_of_type
-- The entities linked (is_a) to the types nearest the label's vector within :max_distance, or
-- to the type of the same canonical name; nearest type first.
WITH types AS (
  (SELECT t.node_id AS id, t.embedding <=> CAST(:q AS vector) AS distance
     FROM memflow.entitytype_name t WHERE t.dataset_id = :dataset_id
    ORDER BY t.embedding <=> CAST(:q AS vector) LIMIT 5)
  UNION ALL
  SELECT n.id, 0.0 FROM memflow.node n
  WHERE n.dataset_id = :dataset_id AND n.kind = 'EntityType' AND n.canonical_name = :key
), chosen AS (
  SELECT id, min(distance) AS distance FROM types WHERE distance <= :max_distance GROUP BY id
)
SELECT en.id, en.name, en.entity_type, en.description, ty.name AS type, c.distance
FROM chosen c
JOIN memflow.node ty ON ty.dataset_id = :dataset_id AND ty.id = c.id
JOIN memflow.edge e ON e.dataset_id = :dataset_id AND e.dst = c.id AND e.relationship = 'is_a'
JOIN memflow.node en ON en.dataset_id = :dataset_id AND en.id = e.src
ORDER BY c.distance, en.name
LIMIT :limit;
