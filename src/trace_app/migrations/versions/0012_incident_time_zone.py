"""Each incident's time zone

Revision ID: 0012
Revises: 0009
Create Date: 2026-12-03

``incidents.time_zone`` holds an IANA zone name (``Asia/Kathmandu``); pages show times
in it, the API keeps UTC. Incidents stored before this revision get "UTC", which is
what every page showed until now.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("time_zone", sa.String(length=64), nullable=False, server_default="UTC")
        )


def downgrade() -> None:
    with op.batch_alter_table("incidents", schema=None) as batch_op:
        batch_op.drop_column("time_zone")
