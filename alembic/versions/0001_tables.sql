-- Revision 0001 (frozen): the tables, indexes and comments of the first memflow release, as that
-- release created them from memflow/db/schema.py. Never edit this file: a schema change is a new
-- revision. @EMBEDDING_DIM@ is the store's embedding dimension, the one parameter.
-- tests/migration compares what this creates with snapshots/0001.json, taken from the release.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE memflow.dataset (
    id uuid NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT dataset_pkey PRIMARY KEY (id),
    CONSTRAINT dataset_name_key UNIQUE (name)
);
COMMENT ON TABLE memflow.dataset IS 'A tenant: every other table carries dataset_id and every query filters on it.';
COMMENT ON COLUMN memflow.dataset.name IS 'The tenant name used by the API and CLI (--dataset).';

CREATE TABLE memflow.store_meta (
    key text NOT NULL,
    value text NOT NULL,
    CONSTRAINT store_meta_pkey PRIMARY KEY (key)
);
COMMENT ON TABLE memflow.store_meta IS 'Store-wide settings fixed at init: embedding dimension and model.';

CREATE TABLE memflow.document (
    dataset_id uuid NOT NULL,
    id uuid NOT NULL,
    source text NOT NULL,
    title text DEFAULT '' NOT NULL,
    content_type text NOT NULL,
    content_hash text NOT NULL,
    reference_time timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT document_pkey PRIMARY KEY (dataset_id, id),
    CONSTRAINT document_dataset_fk FOREIGN KEY (dataset_id)
        REFERENCES memflow.dataset (id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.document IS 'An input that was memorised (file, conversation, or a set of structured drafts).';
COMMENT ON COLUMN memflow.document.content_hash IS 'sha256 of the normalised input; memorizing the same content again is a no-op.';

CREATE TABLE memflow.chunk (
    dataset_id uuid NOT NULL,
    id uuid NOT NULL,
    document_id uuid NOT NULL,
    idx integer NOT NULL,
    key text NOT NULL,
    text text NOT NULL,
    speaker text,
    ts timestamp with time zone,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, text)) STORED,
    CONSTRAINT chunk_pkey PRIMARY KEY (dataset_id, id),
    CONSTRAINT chunk_document_fk FOREIGN KEY (dataset_id, document_id)
        REFERENCES memflow.document (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.chunk IS 'A sentence or dialog turn of a document: provenance and lexical search.';
COMMENT ON COLUMN memflow.chunk.key IS 'Stable key inside the document: turn id (D1:3), t<n> or s<n>.';
CREATE INDEX chunk_document_idx ON memflow.chunk (dataset_id, document_id, idx);
CREATE INDEX chunk_tsv_idx ON memflow.chunk USING gin (tsv);
CREATE INDEX chunk_text_trgm_idx ON memflow.chunk USING gin (text gin_trgm_ops);

CREATE TABLE memflow.node (
    dataset_id uuid NOT NULL,
    id uuid NOT NULL,
    kind text NOT NULL,
    name text DEFAULT '' NOT NULL,
    summary text,
    search_text text,
    anchor_text text,
    description text,
    facet_type text,
    canonical_name text,
    entity_type text,
    memory_type text,
    status text,
    display_only boolean DEFAULT false NOT NULL,
    time_start timestamp with time zone,
    time_end timestamp with time zone,
    time_confidence double precision,
    time_text text,
    props jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
        coalesce(name, '') || ' ' || coalesce(summary, '') || ' ' ||
        coalesce(search_text, '') || ' ' || coalesce(anchor_text, ''))) STORED,
    CONSTRAINT node_pkey PRIMARY KEY (dataset_id, id),
    CONSTRAINT node_dataset_fk FOREIGN KEY (dataset_id)
        REFERENCES memflow.dataset (id) ON DELETE CASCADE,
    CONSTRAINT node_kind_check CHECK (kind IN ('Episode', 'Facet', 'FacetPoint', 'Entity'))
);
COMMENT ON TABLE memflow.node IS 'Graph nodes: Episodes, Facets, FacetPoints and Entities (views per kind).';
COMMENT ON COLUMN memflow.node.kind IS 'Episode | Facet | FacetPoint | Entity';
COMMENT ON COLUMN memflow.node.search_text IS 'Facet: short handle; FacetPoint: the atomic statement. Embedded per collection.';
COMMENT ON COLUMN memflow.node.anchor_text IS 'Facet: the detailed text of the aspect (embedded as Facet_anchor_text).';
COMMENT ON COLUMN memflow.node.canonical_name IS 'Entity: NFKC, casefolded, punctuation removed; unique per dataset.';
CREATE INDEX node_kind_idx ON memflow.node (dataset_id, kind);
CREATE UNIQUE INDEX node_entity_canonical_idx ON memflow.node (dataset_id, canonical_name)
    WHERE kind = 'Entity';
CREATE INDEX node_tsv_idx ON memflow.node USING gin (tsv);

CREATE TABLE memflow.edge (
    dataset_id uuid NOT NULL,
    id uuid NOT NULL,
    src uuid NOT NULL,
    relationship text NOT NULL,
    dst uuid NOT NULL,
    edge_text text NOT NULL,
    text_hash bytea NOT NULL,
    weight double precision DEFAULT 1.0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT edge_pkey PRIMARY KEY (dataset_id, id),
    CONSTRAINT edge_src_rel_dst_key UNIQUE (dataset_id, src, relationship, dst),
    CONSTRAINT edge_src_fk FOREIGN KEY (dataset_id, src)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE,
    CONSTRAINT edge_dst_fk FOREIGN KEY (dataset_id, dst)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE,
    CONSTRAINT edge_relationship_check
        CHECK (relationship IN ('has_facet', 'has_point', 'involves_entity', 'same_entity_as'))
);
COMMENT ON TABLE memflow.edge IS 'Typed graph edges; edge_text is embedded in memflow.edge_text.';
COMMENT ON COLUMN memflow.edge.relationship IS 'has_facet | has_point | involves_entity | same_entity_as';
COMMENT ON COLUMN memflow.edge.edge_text IS 'The semantic text of the link, embedded once per dataset in memflow.edge_text.';
CREATE INDEX edge_dst_idx ON memflow.edge (dataset_id, dst);
CREATE INDEX edge_text_hash_idx ON memflow.edge (dataset_id, text_hash);

-- Provenance.
CREATE TABLE memflow.node_source (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    document_id uuid NOT NULL,
    CONSTRAINT node_source_pkey PRIMARY KEY (dataset_id, node_id, document_id),
    CONSTRAINT node_source_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE,
    CONSTRAINT node_source_document_fk FOREIGN KEY (dataset_id, document_id)
        REFERENCES memflow.document (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.node_source IS 'Provenance: which documents support each node.';
CREATE INDEX node_source_document_idx ON memflow.node_source (dataset_id, document_id);

CREATE TABLE memflow.edge_source (
    dataset_id uuid NOT NULL,
    edge_id uuid NOT NULL,
    document_id uuid NOT NULL,
    CONSTRAINT edge_source_pkey PRIMARY KEY (dataset_id, edge_id, document_id),
    CONSTRAINT edge_source_edge_fk FOREIGN KEY (dataset_id, edge_id)
        REFERENCES memflow.edge (dataset_id, id) ON DELETE CASCADE,
    CONSTRAINT edge_source_document_fk FOREIGN KEY (dataset_id, document_id)
        REFERENCES memflow.document (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.edge_source IS 'Provenance: which documents support each edge.';
CREATE INDEX edge_source_document_idx ON memflow.edge_source (dataset_id, document_id);

CREATE TABLE memflow.node_chunk (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    chunk_id uuid NOT NULL,
    CONSTRAINT node_chunk_pkey PRIMARY KEY (dataset_id, node_id, chunk_id),
    CONSTRAINT node_chunk_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE,
    CONSTRAINT node_chunk_chunk_fk FOREIGN KEY (dataset_id, chunk_id)
        REFERENCES memflow.chunk (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.node_chunk IS 'Provenance: the chunks (sentences, turns) a node was extracted from.';
CREATE INDEX node_chunk_chunk_idx ON memflow.node_chunk (dataset_id, chunk_id);

-- Per-field embeddings, one table per collection, each with a cosine HNSW index.
CREATE TABLE memflow.episode_summary (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT episode_summary_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT episode_summary_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.episode_summary IS 'Embeddings of Episode_summary (cosine HNSW).';
CREATE INDEX episode_summary_hnsw_idx ON memflow.episode_summary
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX episode_summary_hash_idx ON memflow.episode_summary (dataset_id, text_hash);

CREATE TABLE memflow.facet_search_text (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT facet_search_text_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT facet_search_text_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.facet_search_text IS 'Embeddings of Facet_search_text (cosine HNSW).';
CREATE INDEX facet_search_text_hnsw_idx ON memflow.facet_search_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX facet_search_text_hash_idx ON memflow.facet_search_text (dataset_id, text_hash);

CREATE TABLE memflow.facet_anchor_text (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT facet_anchor_text_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT facet_anchor_text_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.facet_anchor_text IS 'Embeddings of Facet_anchor_text (cosine HNSW).';
CREATE INDEX facet_anchor_text_hnsw_idx ON memflow.facet_anchor_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX facet_anchor_text_hash_idx ON memflow.facet_anchor_text (dataset_id, text_hash);

CREATE TABLE memflow.facetpoint_search_text (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT facetpoint_search_text_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT facetpoint_search_text_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.facetpoint_search_text IS 'Embeddings of FacetPoint_search_text (cosine HNSW).';
CREATE INDEX facetpoint_search_text_hnsw_idx ON memflow.facetpoint_search_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX facetpoint_search_text_hash_idx ON memflow.facetpoint_search_text (dataset_id, text_hash);

CREATE TABLE memflow.entity_name (
    dataset_id uuid NOT NULL,
    node_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT entity_name_pkey PRIMARY KEY (dataset_id, node_id),
    CONSTRAINT entity_name_node_fk FOREIGN KEY (dataset_id, node_id)
        REFERENCES memflow.node (dataset_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.entity_name IS 'Embeddings of Entity_name (cosine HNSW).';
CREATE INDEX entity_name_hnsw_idx ON memflow.entity_name
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX entity_name_hash_idx ON memflow.entity_name (dataset_id, text_hash);

CREATE TABLE memflow.edge_text (
    dataset_id uuid NOT NULL,
    text_hash bytea NOT NULL,
    text text NOT NULL,
    embedding vector(@EMBEDDING_DIM@) NOT NULL,
    CONSTRAINT edge_text_pkey PRIMARY KEY (dataset_id, text_hash),
    CONSTRAINT edge_text_dataset_fk FOREIGN KEY (dataset_id)
        REFERENCES memflow.dataset (id) ON DELETE CASCADE
);
COMMENT ON TABLE memflow.edge_text IS 'Embeddings of Edge_text (cosine HNSW).';
CREATE INDEX edge_text_hnsw_idx ON memflow.edge_text
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

INSERT INTO memflow.store_meta (key, value) VALUES ('embedding_dim', '@EMBEDDING_DIM@');
