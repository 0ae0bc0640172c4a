"""SQLAlchemy table definitions of the ``memflow`` schema.

Alembic revisions create these tables; ``tests/migration`` checks that autogenerate against this
metadata is empty. The embedding dimension is a parameter: it is fixed when the store is created.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR, UUID
from sqlalchemy.sql.schema import SchemaItem

from memflow.db.comments import column_comment

SCHEMA = "memflow"
NODE_KINDS = (
    "Episode",
    "Facet",
    "FacetPoint",
    "Entity",
    "EntityType",
    "Procedure",
    "ProcedureContextPoint",
    "ProcedureStepPoint",
)
RELATIONSHIPS = (
    "has_facet",
    "has_point",
    "involves_entity",
    "same_entity_as",
    "is_a",
    "has_procedure",
    "has_context_point",
    "has_key_point",
    "supersedes",
)


@dataclass(frozen=True)
class Collection:
    """One embedded field: the name shown in explain output and its table."""

    name: str
    table: str
    node_kind: str | None  # None for edge texts
    field: str


COLLECTIONS: tuple[Collection, ...] = (
    Collection("Episode_summary", "episode_summary", "Episode", "summary"),
    Collection("Facet_search_text", "facet_search_text", "Facet", "search_text"),
    Collection("Facet_anchor_text", "facet_anchor_text", "Facet", "anchor_text"),
    Collection("FacetPoint_search_text", "facetpoint_search_text", "FacetPoint", "search_text"),
    Collection("Entity_name", "entity_name", "Entity", "name"),
    Collection("Edge_text", "edge_text", None, "edge_text"),
    # Revision 0005: procedural memory and entity types (not part of episodic recall).
    Collection("Procedure_summary", "procedure_summary", "Procedure", "summary"),
    Collection("Procedure_step_text", "procedure_step_text", "ProcedureStepPoint", "search_text"),
    Collection(
        "Procedure_context_text", "procedure_context_text", "ProcedureContextPoint", "search_text"
    ),
    Collection("EntityType_name", "entitytype_name", "EntityType", "name"),
)
COLLECTION_BY_NAME = {c.name: c for c in COLLECTIONS}


def _sql_list(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _now() -> Column[object]:
    return Column(
        "created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")
    )


def _temporal() -> list[Column[object]]:
    """Revision 0004: event time, record time and validity of a node or edge."""
    return [
        Column("valid_at", DateTime(timezone=True)),
        Column(
            "recorded_at", DateTime(timezone=True), nullable=False, server_default=text("now()")
        ),
        Column("invalid_at", DateTime(timezone=True)),
        Column("superseded_by", UUID(as_uuid=True)),
    ]


def build_metadata(dim: int) -> MetaData:
    md = MetaData(schema=SCHEMA)
    Table(
        "store_meta",
        md,
        Column("key", Text, primary_key=True),
        Column("value", Text, nullable=False),
        comment="Store-wide settings fixed at init: embedding dimension and model.",
    )
    Table(
        "dataset",
        md,
        Column("id", UUID(as_uuid=True), primary_key=True),
        Column(
            "name",
            Text,
            nullable=False,
            comment="The tenant name used by the API and CLI (--dataset).",
        ),
        _now(),
        Column("meta", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        UniqueConstraint("name", name="dataset_name_key"),
        comment="A tenant: every other table carries dataset_id and every query filters on it.",
    )
    Table(
        "dataset_reader",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column(
            "role_name",
            Text,
            nullable=False,
            comment="A PostgreSQL role; its members may read the dataset "
            "(memflow db grant-reader ROLE --dataset NAME).",
        ),
        Column("granted_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        PrimaryKeyConstraint("dataset_id", "role_name", name="dataset_reader_pkey"),
        ForeignKeyConstraint(
            ["dataset_id"],
            ["memflow.dataset.id"],
            ondelete="CASCADE",
            name="dataset_reader_dataset_fk",
        ),
        comment="Roles allowed to bind a psql session to a dataset with memflow.use_dataset(name).",
    )
    Table(
        "document",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("id", UUID(as_uuid=True), nullable=False),
        Column("source", Text, nullable=False),
        Column("title", Text, nullable=False, server_default=""),
        Column("content_type", Text, nullable=False),
        Column(
            "content_hash",
            Text,
            nullable=False,
            comment="sha256 of the normalised input; memorizing the same content again is a no-op.",
        ),
        Column("reference_time", DateTime(timezone=True)),
        _now(),
        Column("meta", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("version", Integer, nullable=False, server_default=text("1")),
        Column("previous_id", UUID(as_uuid=True)),
        Column("replaced_by", UUID(as_uuid=True)),
        # Revision 0006: scopes and metadata, inherited by what the document produced through
        # node_source / edge_source (memflow.recall.visibility).
        Column("scope", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        CheckConstraint("jsonb_typeof(scope) = 'object'", name="document_scope_check"),
        CheckConstraint("jsonb_typeof(metadata) = 'object'", name="document_metadata_check"),
        PrimaryKeyConstraint("dataset_id", "id", name="document_pkey"),
        ForeignKeyConstraint(
            ["dataset_id"], ["memflow.dataset.id"], ondelete="CASCADE", name="document_dataset_fk"
        ),
        Index("document_source_idx", "dataset_id", "source"),
        Index(
            "document_scope_idx",
            "scope",
            postgresql_using="gin",
            postgresql_ops={"scope": "jsonb_path_ops"},
        ),
        comment="An input that was memorised (file, conversation, or a set of structured drafts).",
    )
    Table(
        "change_log",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("id", UUID(as_uuid=True), nullable=False, server_default=text("gen_random_uuid()")),
        Column("node_id", UUID(as_uuid=True)),
        Column("document_id", UUID(as_uuid=True)),
        Column("action", Text, nullable=False),
        Column("reason", Text, nullable=False),
        Column("actor", Text, nullable=False, server_default=text("SESSION_USER")),
        Column("at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column("detail", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        PrimaryKeyConstraint("dataset_id", "id", name="change_log_pkey"),
        ForeignKeyConstraint(
            ["dataset_id"], ["memflow.dataset.id"], ondelete="CASCADE", name="change_log_dataset_fk"
        ),
        CheckConstraint(
            "reason IN ('document', 'rule', 'model', 'correction', 'forget')",
            name="change_log_reason_check",
        ),
        Index("change_log_node_idx", "dataset_id", "node_id"),
        comment="Audit of every change to what is true: supersessions, corrections, revivals, "
        "document versions.",
    )
    Table(
        "graph_revision",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("revision", BigInteger, nullable=False),
        PrimaryKeyConstraint("dataset_id", name="graph_revision_pkey"),
        ForeignKeyConstraint(
            ["dataset_id"],
            ["memflow.dataset.id"],
            ondelete="CASCADE",
            name="graph_revision_dataset_fk",
        ),
        comment="Each dataset's graph revision: new with every statement that writes its "
        "nodes, edges, documents, node sources or point embeddings.",
    )
    Table(
        "chunk",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("id", UUID(as_uuid=True), nullable=False),
        Column("document_id", UUID(as_uuid=True), nullable=False),
        Column("idx", Integer, nullable=False),
        Column(
            "key",
            Text,
            nullable=False,
            comment="Stable key inside the document: turn id (D1:3), t<n> or s<n>.",
        ),
        Column("text", Text, nullable=False),
        Column("speaker", Text),
        Column("ts", DateTime(timezone=True)),
        Column("tsv", TSVECTOR, Computed("to_tsvector('simple'::regconfig, text)", persisted=True)),
        PrimaryKeyConstraint("dataset_id", "id", name="chunk_pkey"),
        ForeignKeyConstraint(
            ["dataset_id", "document_id"],
            ["memflow.document.dataset_id", "memflow.document.id"],
            ondelete="CASCADE",
            name="chunk_document_fk",
        ),
        Index("chunk_document_idx", "dataset_id", "document_id", "idx"),
        Index("chunk_tsv_idx", "tsv", postgresql_using="gin"),
        Index(
            "chunk_text_trgm_idx",
            "text",
            postgresql_using="gin",
            postgresql_ops={"text": "gin_trgm_ops"},
        ),
        comment="A sentence or dialog turn of a document: provenance and lexical search.",
    )
    Table(
        "node",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("id", UUID(as_uuid=True), nullable=False),
        Column("kind", Text, nullable=False, comment=" | ".join(NODE_KINDS)),
        Column("name", Text, nullable=False, server_default=""),
        Column("summary", Text),
        Column(
            "search_text",
            Text,
            comment="Facet: short handle; FacetPoint: the atomic statement. Embedded per collection.",
        ),
        Column(
            "anchor_text",
            Text,
            comment="Facet: the detailed text of the aspect (embedded as Facet_anchor_text).",
        ),
        Column("description", Text),
        Column("facet_type", Text),
        Column("canonical_name", Text),
        Column("entity_type", Text),
        Column("memory_type", Text),
        Column("status", Text),
        Column("display_only", Boolean, nullable=False, server_default=text("false")),
        Column("time_start", DateTime(timezone=True)),
        Column("time_end", DateTime(timezone=True)),
        Column("time_confidence", Float),
        Column("time_text", Text),
        Column("props", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _now(),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column(
            "tsv",
            TSVECTOR,
            Computed(
                "to_tsvector('simple'::regconfig, coalesce(name, '') || ' ' || coalesce(summary, '') || ' ' "
                "|| coalesce(search_text, '') || ' ' || coalesce(anchor_text, ''))",
                persisted=True,
            ),
        ),
        *_temporal(),
        # revision 0008: what search reads of the node's provenance (memflow.store.citations)
        Column("citations", JSONB),
        Column("speaker", Text),
        PrimaryKeyConstraint("dataset_id", "id", name="node_pkey"),
        ForeignKeyConstraint(
            ["dataset_id"], ["memflow.dataset.id"], ondelete="CASCADE", name="node_dataset_fk"
        ),
        CheckConstraint(f"kind IN ({_sql_list(NODE_KINDS)})", name="node_kind_check"),
        Index("node_kind_idx", "dataset_id", "kind"),
        Index(
            "node_entity_canonical_idx",
            "dataset_id",
            "canonical_name",
            unique=True,
            postgresql_where=text("kind = 'Entity'"),
        ),
        Index(
            "node_entitytype_canonical_idx",
            "dataset_id",
            "canonical_name",
            unique=True,
            postgresql_where=text("kind = 'EntityType'"),
        ),
        Index(
            "node_procedure_key_idx",
            "dataset_id",
            "canonical_name",
            postgresql_where=text("kind = 'Procedure'"),
        ),
        Index("node_tsv_idx", "tsv", postgresql_using="gin"),
        Index(
            "node_superseded_by_idx",
            "dataset_id",
            "superseded_by",
            postgresql_where=text("superseded_by IS NOT NULL"),
        ),
        comment="Graph nodes: Episodes, Facets, FacetPoints and Entities (views per kind).",
    )
    Table(
        "edge",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("id", UUID(as_uuid=True), nullable=False),
        Column("src", UUID(as_uuid=True), nullable=False),
        Column(
            "relationship",
            Text,
            nullable=False,
            comment=" | ".join(RELATIONSHIPS),
        ),
        Column("dst", UUID(as_uuid=True), nullable=False),
        Column(
            "edge_text",
            Text,
            nullable=False,
            comment="The semantic text of the link, embedded once per dataset in memflow.edge_text.",
        ),
        Column("text_hash", LargeBinary, nullable=False),
        Column("weight", Float, nullable=False, server_default=text("1.0")),
        _now(),
        *_temporal(),
        PrimaryKeyConstraint("dataset_id", "id", name="edge_pkey"),
        UniqueConstraint("dataset_id", "src", "relationship", "dst", name="edge_src_rel_dst_key"),
        ForeignKeyConstraint(
            ["dataset_id", "src"],
            ["memflow.node.dataset_id", "memflow.node.id"],
            ondelete="CASCADE",
            name="edge_src_fk",
        ),
        ForeignKeyConstraint(
            ["dataset_id", "dst"],
            ["memflow.node.dataset_id", "memflow.node.id"],
            ondelete="CASCADE",
            name="edge_dst_fk",
        ),
        CheckConstraint(
            f"relationship IN ({_sql_list(RELATIONSHIPS)})", name="edge_relationship_check"
        ),
        Index("edge_dst_idx", "dataset_id", "dst"),
        Index("edge_text_hash_idx", "dataset_id", "text_hash"),
        comment="Typed graph edges; edge_text is embedded in memflow.edge_text.",
    )
    for name, target, fk_cols in (
        ("node_source", "node", "node_id"),
        ("edge_source", "edge", "edge_id"),
    ):
        Table(
            name,
            md,
            Column("dataset_id", UUID(as_uuid=True), nullable=False),
            Column(fk_cols, UUID(as_uuid=True), nullable=False),
            Column("document_id", UUID(as_uuid=True), nullable=False),
            PrimaryKeyConstraint("dataset_id", fk_cols, "document_id", name=f"{name}_pkey"),
            ForeignKeyConstraint(
                ["dataset_id", fk_cols],
                [f"memflow.{target}.dataset_id", f"memflow.{target}.id"],
                ondelete="CASCADE",
                name=f"{name}_{target}_fk",
            ),
            ForeignKeyConstraint(
                ["dataset_id", "document_id"],
                ["memflow.document.dataset_id", "memflow.document.id"],
                ondelete="CASCADE",
                name=f"{name}_document_fk",
            ),
            Index(f"{name}_document_idx", "dataset_id", "document_id"),
            comment=f"Provenance: which documents support each {target}.",
        )
    Table(
        "node_chunk",
        md,
        Column("dataset_id", UUID(as_uuid=True), nullable=False),
        Column("node_id", UUID(as_uuid=True), nullable=False),
        Column("chunk_id", UUID(as_uuid=True), nullable=False),
        PrimaryKeyConstraint("dataset_id", "node_id", "chunk_id", name="node_chunk_pkey"),
        ForeignKeyConstraint(
            ["dataset_id", "node_id"],
            ["memflow.node.dataset_id", "memflow.node.id"],
            ondelete="CASCADE",
            name="node_chunk_node_fk",
        ),
        ForeignKeyConstraint(
            ["dataset_id", "chunk_id"],
            ["memflow.chunk.dataset_id", "memflow.chunk.id"],
            ondelete="CASCADE",
            name="node_chunk_chunk_fk",
        ),
        Index("node_chunk_chunk_idx", "dataset_id", "chunk_id"),
        comment="Provenance: the chunks (sentences, turns) a node was extracted from.",
    )
    for coll in COLLECTIONS:
        key_col = "node_id" if coll.node_kind else "text_hash"
        cols: list[SchemaItem] = [
            Column("dataset_id", UUID(as_uuid=True), nullable=False),
        ]
        if coll.node_kind:
            cols += [
                Column("node_id", UUID(as_uuid=True), nullable=False),
                Column("text_hash", LargeBinary, nullable=False),
            ]
        else:
            cols.append(Column("text_hash", LargeBinary, nullable=False))
        cols += [
            Column("text", Text, nullable=False),
            Column("embedding", Vector(dim), nullable=False),
            PrimaryKeyConstraint("dataset_id", key_col, name=f"{coll.table}_pkey"),
            Index(
                f"{coll.table}_hnsw_idx",
                "embedding",
                postgresql_using="hnsw",
                postgresql_with={"m": 16, "ef_construction": 64},
                postgresql_ops={"embedding": "vector_cosine_ops"},
            ),
        ]
        if coll.node_kind:
            cols += [
                ForeignKeyConstraint(
                    ["dataset_id", "node_id"],
                    ["memflow.node.dataset_id", "memflow.node.id"],
                    ondelete="CASCADE",
                    name=f"{coll.table}_node_fk",
                ),
                Index(f"{coll.table}_hash_idx", "dataset_id", "text_hash"),
            ]
        else:
            cols.append(
                ForeignKeyConstraint(
                    ["dataset_id"],
                    ["memflow.dataset.id"],
                    ondelete="CASCADE",
                    name="edge_text_dataset_fk",
                )
            )
        Table(coll.table, md, *cols, comment=f"Embeddings of {coll.name} (cosine HNSW).")
    for table in md.tables.values():
        for col in table.columns:
            if col.comment is None:
                col.comment = column_comment(table.name, col.name)
    return md
