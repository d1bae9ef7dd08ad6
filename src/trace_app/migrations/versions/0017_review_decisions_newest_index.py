"""The incident's newest review decisions as an index: (incident_id, decided_at, id)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04

The Reviews page lists the incident's ten newest decisions ("Recently decided",
``trace_app.domain.reviews.recent_decisions``). With an index on ``incident_id`` alone,
every decision of the incident was read and sorted for it (20 ms for 10,000 decisions on
SQLite, growing with them); this index is read backwards from its end. It also serves
every lookup by incident, so it replaces the one-column index. Plain ``CREATE INDEX``
and ``DROP INDEX`` on both databases.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW = "ix_review_decisions_incident_newest"
OLD = "ix_review_decisions_incident_id"


def upgrade() -> None:
    op.create_index(NEW, "review_decisions", ["incident_id", "decided_at", "id"])
    op.drop_index(OLD, table_name="review_decisions")


def downgrade() -> None:
    op.create_index(OLD, "review_decisions", ["incident_id"])
    op.drop_index(NEW, table_name="review_decisions")
