"""Index for the newest open alerts of an incident

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

The People page shows the newest open alerts. With an index on (incident_id, state)
only, the database joined every open alert before sorting; this index returns them
already in order.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_incident_state")
        batch_op.create_index(
            "ix_alerts_open_newest", ["incident_id", "state", "position", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_open_newest")
        batch_op.create_index("ix_alerts_incident_state", ["incident_id", "state"], unique=False)
