"""The review queue in priority order, and who has taken a review ("assign to me")

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04

``investigation_runs`` gains the two keys the queue orders by after its open-alert lane:
``review_rank`` (0: the report is about a child or an older person, 1: anyone else) and
``report_reported_at`` (the report's reported time), both copied from the report when a
run is saved, and the index that serves the queue in that order. Existing runs keep them
NULL: the first look at their incident's queue sets them with the current rule, as for
the stored decisions of revision 0013, since a migration must not import today's rules
(docs/decisions/0150-review-queue-priority.md).

``review_assignments`` holds one row per report someone has taken, indexed for "assigned
to me". Plain ``ADD COLUMN`` (batch mode on SQLite), ``CREATE TABLE`` and ``CREATE INDEX``
on both databases.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from trace_app.store.types import UTCDateTime

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PRIORITY_INDEX = "ix_investigation_runs_review_priority"
PRIORITY_COLUMNS = ["incident_id", "awaiting_review", "review_rank", "report_reported_at", "id"]
ASSIGNEE_INDEX = "ix_review_assignments_incident_assignee"


def upgrade() -> None:
    with op.batch_alter_table("investigation_runs") as batch_op:
        batch_op.add_column(sa.Column("review_rank", sa.SmallInteger(), nullable=True))
        batch_op.add_column(sa.Column("report_reported_at", UTCDateTime(), nullable=True))
    op.create_index(PRIORITY_INDEX, "investigation_runs", PRIORITY_COLUMNS, unique=False)
    op.create_table(
        "review_assignments",
        sa.Column("report_id", sa.String(length=40), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=False),
        sa.Column("assigned_to", sa.String(length=200), nullable=False),
        sa.Column("assigned_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"],
            ["incidents.id"],
            name=op.f("fk_review_assignments_incident_id_incidents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["reports.id"],
            name=op.f("fk_review_assignments_report_id_reports"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("report_id", name=op.f("pk_review_assignments")),
    )
    op.create_index(
        ASSIGNEE_INDEX, "review_assignments", ["incident_id", "assigned_to"], unique=False
    )


def downgrade() -> None:
    op.drop_index(ASSIGNEE_INDEX, table_name="review_assignments")
    op.drop_table("review_assignments")
    op.drop_index(PRIORITY_INDEX, table_name="investigation_runs")
    with op.batch_alter_table("investigation_runs") as batch_op:
        batch_op.drop_column("report_reported_at")
        batch_op.drop_column("review_rank")
