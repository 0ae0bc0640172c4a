"""The ``COMMENT ON COLUMN`` texts of the tables and views psql users read (revision 0003).

``schema.build_metadata`` gives the tables' columns these comments, so autogenerate matches what
revision 0003 wrote. The revision holds its own literal copy (frozen); a change here needs a new
revision.
"""

from __future__ import annotations

# Columns with the same meaning wherever they appear (unless a table names its own below).
SHARED: dict[str, str] = {
    "dataset_id": "The dataset (tenant) of the row; row-level security shows only the bound one.",
    "dataset": "The dataset name (memflow.dataset.name); filter on it.",
    "created_at": "When the row was written.",
    "updated_at": "When the row last changed (a merge updates episodes).",
    "document_id": "The document (memflow.document.id) of the row.",
    "node_id": "The node (memflow.node.id) of the row.",
    "text_hash": "sha256 of the embedded text: the same text is embedded once per dataset.",
    "text": "The text that was embedded.",
    "embedding": "The embedding vector (cosine distance; HNSW index).",
    "tsv": "Full-text vector ('simple' configuration) for lexical search.",
    "meta": "Free-form JSON: the dataset records its embedder here.",
    "time_start": "Start of the time the row is about (mentioned or inferred), if known.",
    "time_end": "End of the time the row is about, if known.",
    "episode_id": "The episode (memflow.node.id of kind Episode).",
    # revision 0004
    "valid_at": "Event time: when the fact began to hold (mentioned, or the time it was said), "
    "if known.",
    "recorded_at": "Record time: when memflow learned it (the message or document time, else "
    "the write time).",
    "invalid_at": "When the fact stopped holding (NULL: still valid).",
    "superseded_by": "The node that replaced this one (NULL: current).",
}

# (table or view, column) -> comment, where a column means something of its own.
COLUMNS: dict[tuple[str, str], str] = {
    ("store_meta", "key"): "Setting name: embedding_dim, embedding_model, ...",
    ("store_meta", "value"): "Setting value, as text.",
    ("dataset", "id"): "Dataset id: uuid5 of the name, the same in every store.",
    ("dataset_reader", "granted_at"): "When memflow db grant-reader granted it.",
    ("document", "id"): "Document id, unique in the dataset.",
    ("document", "source"): "Where the input came from: a path, '-' for stdin, or add_episode.",
    ("document", "title"): "The document's title (a Markdown heading or the file name).",
    (
        "document",
        "content_type",
    ): "What the input was parsed as (markdown, text, conversation, draft, ...).",
    ("document", "reference_time"): "The time relative dates in the document are read against.",
    ("document", "meta"): "Free-form JSON about the input.",
    ("chunk", "id"): "Chunk id, unique in the dataset.",
    ("chunk", "idx"): "Position of the chunk in its document, from 0.",
    ("chunk", "text"): "The sentence or turn.",
    ("chunk", "speaker"): "Who said it (dialog turns), else NULL.",
    ("chunk", "ts"): "When it was said or written, if known.",
    ("node", "id"): "Node id, unique in the dataset.",
    ("node", "name"): "Episode: its title; Entity: the name as written; else a short label.",
    ("node", "summary"): "Episode: the summary (embedded as Episode_summary).",
    ("node", "canonical_name"): "Entity, EntityType: NFKC, casefolded, punctuation removed; "
    "unique per dataset. Procedure: the key its versions share.",
    ("node", "description"): "Longer free text about the node, not embedded.",
    ("node", "facet_type"): "Facet: its kind (plan, constraint, decision, fact, ...).",
    ("node", "entity_type"): "Entity: person, organisation, place, thing, ...",
    ("node", "memory_type"): "Episode: the kind of memory (event, conversation, document, ...).",
    ("node", "status"): "Episode: lifecycle status (e.g. open); Procedure: current or superseded.",
    ("node", "display_only"): "True for nodes shown in context but never searched directly.",
    ("node", "time_confidence"): "How sure the time span is, from 0 to 1.",
    ("node", "time_text"): "The time as the text mentioned it (e.g. 'last Friday').",
    ("node", "props"): "Free-form JSON properties of the node "
    "(Procedure: version; step: position; context point: aspect).",
    # revision 0008
    ("node", "citations"): "Episode, Facet, FacetPoint: the chunks it cites, [key, document id, "
    "document source, ts] each, in chunk order (NULL: none); kept by the write path.",
    ("node", "speaker"): "Episode, Facet, FacetPoint: the speaker of its first cited chunk, if "
    "any; kept by the write path.",
    ("edge", "id"): "Edge id, unique in the dataset.",
    ("edge", "src"): "The node the edge starts at (an Episode or a Facet).",
    ("edge", "dst"): "The node the edge points to.",
    ("edge", "text_hash"): "sha256 of edge_text: its row in memflow.edge_text.",
    ("edge", "weight"): "Strength of the link (the column default unless a writer sets it).",
    ("edge_source", "edge_id"): "The edge (memflow.edge.id) a document supports.",
    ("node_chunk", "chunk_id"): "The chunk (memflow.chunk.id) the node was extracted from.",
    ("edge_text", "text_hash"): "sha256 of the edge text: edges with the same text share it.",
    ("episodes", "id"): "The episode's node id (memflow.node.id).",
    ("episodes", "name"): "The episode's title.",
    ("episodes", "summary"): "What happened, in a few sentences.",
    ("episodes", "status"): "Lifecycle status, if given.",
    ("episodes", "memory_type"): "The kind of memory (event, conversation, document, ...).",
    ("episodes", "time_text"): "The time as the text mentioned it.",
    ("facets", "id"): "The facet's node id.",
    ("facets", "facet_type"): "The kind of aspect (plan, constraint, decision, fact, ...).",
    ("facets", "search_text"): "The short handle of the aspect (embedded).",
    ("facets", "anchor_text"): "The detailed text of the aspect (embedded).",
    ("facets", "description"): "Longer free text, not embedded.",
    ("facet_points", "facet_id"): "The facet the point belongs to.",
    ("facet_points", "id"): "The point's node id.",
    ("facet_points", "search_text"): "The atomic statement (embedded).",
    ("facet_points", "description"): "Longer free text, not embedded.",
    ("facet_points", "sources"): "Keys of the chunks (turns, sentences) that support the point.",
    ("entities", "id"): "The entity's node id.",
    ("entities", "name"): "The name as first written.",
    ("entities", "canonical_name"): "NFKC, casefolded, punctuation removed: one entity per name.",
    ("entities", "entity_type"): "person, organisation, place, thing, ...",
    ("entities", "description"): "Longer free text about the entity.",
    ("entities", "degree"): "How many episodes and facets involve the entity.",
    ("procedures", "id"): "The procedure's node id (memflow.node.id).",
    ("procedures", "name"): "The procedure's title.",
    ("procedures", "summary"): "What the procedure does (embedded as Procedure_summary).",
    ("procedures", "status"): "current, or superseded by a newer version.",
    ("procedures", "version"): "1 for the first version; each superseding version adds 1.",
    ("procedures", "steps"): "The steps, in order.",
    ("procedures", "context"): "When, why and preconditions, as aspect: text.",
    ("procedures", "episode_id"): "The episode the procedure was laid out in.",
    ("procedures", "superseded_by"): "The newer version, when this one is superseded.",
    ("episode_tree", "tree"): "One line of the indented tree: kind and text of the node.",
    ("episode_tree", "edge_text"): "The text of the link from the parent to this node.",
    ("episode_tree", "depth"): "0 for the episode, 1 for facets and entities, 2 for points.",
    ("episode_tree", "kind"): "Episode | Facet | FacetPoint | Entity",
    # revision 0004
    ("document", "version"): "Version of the source: 1, then +1 each time an edited file from "
    "the same source is memorised.",
    ("document", "previous_id"): "The previous version of this document (memflow.document.id), "
    "if any.",
    ("document", "replaced_by"): "The newer version of this document, if any (NULL: current).",
    # revision 0006
    ("document", "scope"): 'Who the document belongs to: {"user", "agent", "session"} (any '
    "subset; {} = unscoped).",
    ("document", "metadata"): "The caller's JSON metadata, filtered by search(where=...).",
    ("change_log", "id"): "Change id, unique in the dataset.",
    ("change_log", "node_id"): "The node (memflow.node.id) that changed, if any.",
    ("change_log", "document_id"): "The document (memflow.document.id) that changed or caused "
    "the change, if any.",
    ("change_log", "action"): "supersede | revive | correct | version | forget",
    ("change_log", "reason"): "What decided it: document | rule | model | correction | forget",
    ("change_log", "actor"): "Who made the change (the actor= argument, else the database login "
    "role).",
    ("change_log", "at"): "When the change was written.",
    ("change_log", "detail"): "Free-form JSON: the replacing node, texts, scores.",
    # revision 0009
    ("graph_revision", "revision"): "The revision of the dataset's graph "
    "(memflow.graph_revision_seq): a new value with every write.",
}


def column_comment(table: str, column: str) -> str | None:
    """The comment of ``table.column`` (a table's or a view's), or None."""
    return COLUMNS.get((table, column)) or SHARED.get(column)


__all__ = ["COLUMNS", "SHARED", "column_comment"]
