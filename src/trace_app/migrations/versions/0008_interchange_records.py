"""Record ids of imported PFIF persons and notes and shelter-list rows

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

``interchange_records`` names each imported record by its record id (unique per incident
and kind), so a second import of the same file adds nothing, and keeps the fields Trace
has no column for, so an export writes the clone as it came.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import trace_app.store.types

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "interchange_records",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("record_id", sa.String(length=500), nullable=False),
        sa.Column("person_id", sa.String(length=40), nullable=True),
        sa.Column("report_id", sa.String(length=40), nullable=True),
        sa.Column("fields", sa.JSON(), nullable=False),
        sa.Column("imported_at", trace_app.store.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"],
            ["incidents.id"],
            name=op.f("fk_interchange_records_incident_id_incidents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["people.id"],
            name=op.f("fk_interchange_records_person_id_people"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["reports.id"],
            name=op.f("fk_interchange_records_report_id_reports"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_interchange_records")),
        sa.UniqueConstraint(
            "incident_id", "kind", "record_id", name="uq_interchange_records_incident_record"
        ),
    )
    with op.batch_alter_table("interchange_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_interchange_records_incident_id"), ["incident_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_interchange_records_person_id"), ["person_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_interchange_records_report_id"), ["report_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("interchange_records")
