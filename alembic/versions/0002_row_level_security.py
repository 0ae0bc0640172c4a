"""Row-level security: every table is readable and writable only for the dataset bound to the
transaction (``SET LOCAL memflow.dataset_id``), for the ``memflow_app`` role memflow uses.

FORCE makes the policies apply to the tables' owner too; superusers and BYPASSRLS roles skip
RLS, so memflow switches its connections to ``memflow_app`` (``SET ROLE``) when it can.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCOPED = (
    "document",
    "chunk",
    "node",
    "edge",
    "node_source",
    "edge_source",
    "node_chunk",
    "episode_summary",
    "facet_search_text",
    "facet_anchor_text",
    "facetpoint_search_text",
    "entity_name",
    "edge_text",
)


def upgrade() -> None:
    op.execute(
        """
        DO $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
            CREATE ROLE memflow_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
          END IF;
        EXCEPTION WHEN insufficient_privilege THEN
          RAISE NOTICE 'memflow: no privilege to create role memflow_app; RLS applies to the owner (FORCE)';
        END $$;
        """
    )
    op.execute(
        """
        CREATE FUNCTION memflow.current_dataset() RETURNS uuid
        LANGUAGE sql STABLE PARALLEL SAFE
        AS $$ SELECT nullif(current_setting('memflow.dataset_id', true), '')::uuid $$;
        COMMENT ON FUNCTION memflow.current_dataset() IS
          'The dataset bound to this transaction (SET LOCAL memflow.dataset_id); NULL when unbound.';
        """
    )
    for table in SCOPED:
        op.execute(
            f"""
            ALTER TABLE memflow.{table} ENABLE ROW LEVEL SECURITY;
            ALTER TABLE memflow.{table} FORCE ROW LEVEL SECURITY;
            CREATE POLICY dataset_isolation ON memflow.{table}
              USING (dataset_id = memflow.current_dataset())
              WITH CHECK (dataset_id = memflow.current_dataset());
            """
        )
    # The dataset directory: names are listable (to resolve --dataset NAME), but a row can be
    # changed or deleted only by a transaction bound to that dataset.
    op.execute(
        """
        ALTER TABLE memflow.dataset ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memflow.dataset FORCE ROW LEVEL SECURITY;
        CREATE POLICY dataset_directory ON memflow.dataset FOR SELECT USING (true);
        CREATE POLICY dataset_create ON memflow.dataset FOR INSERT WITH CHECK (true);
        CREATE POLICY dataset_update ON memflow.dataset FOR UPDATE
          USING (id = memflow.current_dataset()) WITH CHECK (id = memflow.current_dataset());
        CREATE POLICY dataset_delete ON memflow.dataset FOR DELETE USING (id = memflow.current_dataset());
        """
    )
    op.execute(
        """
        DO $$
        BEGIN
          IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
            GRANT USAGE ON SCHEMA memflow TO memflow_app;
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA memflow TO memflow_app;
            REVOKE INSERT, UPDATE, DELETE ON memflow.store_meta, memflow.alembic_version FROM memflow_app;
            GRANT EXECUTE ON FUNCTION memflow.current_dataset() TO memflow_app;
          END IF;
        END $$;
        """
    )


def downgrade() -> None:
    for table in SCOPED:
        op.execute(
            f"""
            DROP POLICY IF EXISTS dataset_isolation ON memflow.{table};
            ALTER TABLE memflow.{table} NO FORCE ROW LEVEL SECURITY;
            ALTER TABLE memflow.{table} DISABLE ROW LEVEL SECURITY;
            """
        )
    op.execute(
        """
        DROP POLICY IF EXISTS dataset_directory ON memflow.dataset;
        DROP POLICY IF EXISTS dataset_create ON memflow.dataset;
        DROP POLICY IF EXISTS dataset_update ON memflow.dataset;
        DROP POLICY IF EXISTS dataset_delete ON memflow.dataset;
        ALTER TABLE memflow.dataset NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE memflow.dataset DISABLE ROW LEVEL SECURITY;
        DROP FUNCTION IF EXISTS memflow.current_dataset();
        DO $$
        BEGIN
          IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memflow_app') THEN
            REVOKE ALL ON ALL TABLES IN SCHEMA memflow FROM memflow_app;
            REVOKE USAGE ON SCHEMA memflow FROM memflow_app;
          END IF;
        END $$;
        """
    )
