"""People's decisions about NEEDS_REVIEW investigation results

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

``review_decisions`` keeps every decision a person records about a report's
NEEDS_REVIEW result (appended, numbered per report by ``sequence``; the highest is the
current one). Nothing in ``investigation_runs`` changes (docs/decisions/0063).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import trace_app.store.types

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=False),
        sa.Column("report_id", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("decided_at", trace_app.store.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"],
            ["incidents.id"],
            name=op.f("fk_review_decisions_incident_id_incidents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["reports.id"],
            name=op.f("fk_review_decisions_report_id_reports"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["investigation_runs.id"],
            name=op.f("fk_review_decisions_run_id_investigation_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_decisions")),
        sa.UniqueConstraint("report_id", "sequence", name="uq_review_decisions_report_sequence"),
    )
    op.create_index(
        op.f("ix_review_decisions_incident_id"), "review_decisions", ["incident_id"], unique=False
    )
    op.create_index(
        op.f("ix_review_decisions_run_id"), "review_decisions", ["run_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_review_decisions_run_id"), table_name="review_decisions")
    op.drop_index(op.f("ix_review_decisions_incident_id"), table_name="review_decisions")
    op.drop_table("review_decisions")
