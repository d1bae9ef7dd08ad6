"""Attribution evidence and rules version on saved investigation runs

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

A saved run keeps the attribution cues code found in the report text when it ran, and
the version of the decision rules that set its status (docs/decisions/0060). Runs saved
before this revision get an empty cue list and no rules version; they are re-decided with
the current rules whenever they are shown, like every other saved run.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("investigation_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("evidence", sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
        )
        batch_op.add_column(sa.Column("rules_version", sa.String(length=80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("investigation_runs", schema=None) as batch_op:
        batch_op.drop_column("rules_version")
        batch_op.drop_column("evidence")
