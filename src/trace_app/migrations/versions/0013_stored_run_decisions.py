"""Each investigation run's current decision, stored; the review queue as an index

Revision ID: 0013
Revises: 0009
Create Date: 2026-12-03

``investigation_runs`` gains the run's decided status, reason, the evidence kinds that
lowered it, the cues it read (when re-decided) and the rules version it was decided with,
plus ``awaiting_review`` (the run is in its incident's review queue) and the indexes the
queue and the re-decision read. The saved columns do not change. Runs stored before this
revision have no decision yet: the first look at their incident's queue decides them with
the current rules (docs/decisions/0084-stored-decisions-and-an-indexed-review-queue.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_investigation_runs_review_queue": ["incident_id", "awaiting_review", "run_at", "id"],
    "ix_investigation_runs_decided_version": ["incident_id", "decided_version"],
    "ix_investigation_runs_report_newest": ["report_id", "run_at", "id"],
}


def upgrade() -> None:
    with op.batch_alter_table("investigation_runs") as batch_op:
        batch_op.add_column(sa.Column("decided_status", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("decided_reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("decided_lowered_by", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("decided_evidence", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("decided_version", sa.String(length=120), nullable=True))
        batch_op.add_column(
            sa.Column(
                "awaiting_review", sa.Boolean(), server_default=sa.text("false"), nullable=False
            )
        )
    for name, columns in INDEXES.items():
        op.create_index(name, "investigation_runs", columns, unique=False)


def downgrade() -> None:
    for name in INDEXES:
        op.drop_index(name, table_name="investigation_runs")
    with op.batch_alter_table("investigation_runs") as batch_op:
        for column in (
            "awaiting_review",
            "decided_version",
            "decided_evidence",
            "decided_lowered_by",
            "decided_reason",
            "decided_status",
        ):
            batch_op.drop_column(column)
