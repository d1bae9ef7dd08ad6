"""Alerts close by rule or by a person

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

An alert records when it closed and why: the later claim that closed it by rule
(``closed_by_claim_id``) or a person's note (``close_note``). Alerts saved before this
revision stay as they were; the rule applies to claims published from now on.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import trace_app.store.types

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("closed_at", trace_app.store.types.UTCDateTime(), nullable=True)
        )
        batch_op.add_column(sa.Column("closed_by_claim_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("close_note", sa.Text(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_alerts_closed_by_claim_id"), ["closed_by_claim_id"], unique=False
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_alerts_closed_by_claim_id_claims"),
            "claims",
            ["closed_by_claim_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_alerts_closed_by_claim_id_claims"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_alerts_closed_by_claim_id"))
        batch_op.drop_column("close_note")
        batch_op.drop_column("closed_by_claim_id")
        batch_op.drop_column("closed_at")
