"""Accounts, memberships, server-side sessions, API tokens, the audit trail; who decided

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02

The audit table is append-only: a trigger on each database refuses UPDATE and DELETE.
Link decisions, review decisions and hand-closed alerts name who made them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import trace_app.store.types

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = trace_app.store.types.UTCDateTime


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("name_key", sa.String(length=80), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("password_changed_at", UTC(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name_key", name=op.f("uq_users_name_key")),
    )
    op.create_table(
        "memberships",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("organization_id", sa.String(length=40), nullable=True),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("scope", sa.String(length=40), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_memberships_organization_id_organizations"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memberships")),
        sa.UniqueConstraint("user_id", "scope", name="uq_memberships_user_scope"),
    )
    op.create_index(op.f("ix_memberships_user_id"), "memberships", ["user_id"], unique=False)
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("last_seen_at", UTC(), nullable=False),
        sa.Column("expires_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_web_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_web_sessions")),
    )
    op.create_index(op.f("ix_web_sessions_user_id"), "web_sessions", ["user_id"], unique=False)
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("user_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("expires_at", UTC(), nullable=True),
        sa.Column("revoked_at", UTC(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_api_tokens_secret_hash")),
    )
    op.create_index(op.f("ix_api_tokens_user_id"), "api_tokens", ["user_id"], unique=False)
    op.create_table(
        "audit_events",
        sa.Column("sequence", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", UTC(), nullable=False),
        sa.Column("actor_kind", sa.String(length=20), nullable=False),
        sa.Column("actor_id", sa.String(length=40), nullable=False),
        sa.Column("actor_name", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=True),
        sa.Column("object_type", sa.String(length=40), nullable=False),
        sa.Column("object_id", sa.String(length=200), nullable=False),
        sa.Column("touched", sa.JSON(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("client", sa.String(length=100), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("sequence", name=op.f("pk_audit_events")),
    )
    op.create_index(op.f("ix_audit_events_at"), "audit_events", ["at"], unique=False)
    op.create_index("ix_audit_events_actor", "audit_events", ["actor_name", "sequence"])
    op.create_index("ix_audit_events_action", "audit_events", ["action", "sequence"])
    op.create_index("ix_audit_events_object", "audit_events", ["object_id", "sequence"])
    for table, column in (("person_links", "decided_by"), ("review_decisions", "decided_by")):
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(
                sa.Column(column, sa.String(length=200), nullable=False, server_default="")
            )
    with op.batch_alter_table("alerts") as batch_op:
        batch_op.add_column(sa.Column("closed_by", sa.String(length=200), nullable=True))
    _append_only_triggers()


def _append_only_triggers() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_events_no_{verb.lower()} BEFORE {verb} ON audit_events "
                "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END"
            )
        return
    op.execute(
        "CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION 'the audit trail is append-only'; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events "
        "FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()"
    )


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch_op:
        batch_op.drop_column("closed_by")
    for table in ("review_decisions", "person_links"):
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("decided_by")
    op.drop_table("audit_events")
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION IF EXISTS audit_events_append_only()")
    op.drop_table("api_tokens")
    op.drop_table("web_sessions")
    op.drop_table("memberships")
    op.drop_table("users")
