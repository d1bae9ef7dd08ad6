"""Linked groups; one alert per person with its sources; closing reasons and reopening

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03

``people.group_id`` names the linked group of a record (people decided "same",
transitively); it is filled here from the current decisions. An alert row that joined
the group's open alert names it (``alerts.joined_alert_id``). Alerts closed by hand
before this revision keep their note and count as withdrawn (``close_reason``). Other
alerts stay as they were; the rule settles a group again at its next claim or decision.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _group_ids(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Each linked person's group: the smallest id of its "same" component (the rule of
    trace_app.domain.links at this revision, copied so the migration never changes)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


def upgrade() -> None:
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.add_column(sa.Column("group_id", sa.String(length=40), nullable=True))
        batch_op.create_index(batch_op.f("ix_people_group_id"), ["group_id"], unique=False)
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("close_reason", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("joined_alert_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("reopened_by", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("reopen_note", sa.Text(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_alerts_joined_alert_id"), ["joined_alert_id"], unique=False
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_alerts_joined_alert_id_alerts"),
            "alerts",
            ["joined_alert_id"],
            ["id"],
            ondelete="SET NULL",
        )
    bind = op.get_bind()
    bind.execute(
        sa.text(
            "UPDATE alerts SET close_reason = 'withdrawn' "
            "WHERE close_note IS NOT NULL AND closed_by_claim_id IS NULL"
        )
    )
    latest: dict[tuple[str, str], tuple[int, str]] = {}
    for a, b, decision, sequence in bind.execute(
        sa.text("SELECT person_a_id, person_b_id, decision, sequence FROM person_links")
    ):
        if (a, b) not in latest or sequence > latest[(a, b)][0]:
            latest[(a, b)] = (sequence, decision)
    same = [pair for pair, (_, decision) in latest.items() if decision == "same"]
    for person_id, group_id in _group_ids(same).items():
        bind.execute(
            sa.text("UPDATE people SET group_id = :g WHERE id = :p"),
            {"g": group_id, "p": person_id},
        )


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_alerts_joined_alert_id_alerts"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_alerts_joined_alert_id"))
        batch_op.drop_column("reopen_note")
        batch_op.drop_column("reopened_by")
        batch_op.drop_column("joined_alert_id")
        batch_op.drop_column("close_reason")
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_people_group_id"))
        batch_op.drop_column("group_id")
