"""Person identity: no unique name per incident, alternate names, link decisions

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02

Two people of an incident may now share a name (a report attaches to a person only on
a confident match, see ``trace_app.domain.identity``), so the unique (incident, name)
constraint goes and a plain index serves the lookup. ``person_alternate_names`` holds
the other names a person is known by; ``person_links`` keeps every decision a person
made about two people (same, different, undecided), newest last. ``people.search_key``
becomes text: it now holds every name of the person, one per line. The existing keys
stay valid (a person without alternate names has a one-line key).

Downgrading restores the unique constraint, which fails if two people of one incident
now share a name: such data cannot be expressed in the older schema.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import trace_app.store.types

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.drop_constraint("uq_people_incident_name", type_="unique")
        batch_op.alter_column(
            "search_key",
            existing_type=sa.String(length=800),
            type_=sa.Text(),
            existing_nullable=False,
            existing_server_default="",
        )
        batch_op.create_index("ix_people_incident_name_key", ["incident_id", "name_key"])
    op.create_table(
        "person_alternate_names",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=False),
        sa.Column("person_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("name_key", sa.String(length=200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"],
            ["incidents.id"],
            name=op.f("fk_person_alternate_names_incident_id_incidents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["people.id"],
            name=op.f("fk_person_alternate_names_person_id_people"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_alternate_names")),
        sa.UniqueConstraint("person_id", "name_key", name="uq_person_alternate_names_key"),
    )
    op.create_index(
        "ix_person_alternate_names_incident_key",
        "person_alternate_names",
        ["incident_id", "name_key"],
    )
    op.create_index(
        op.f("ix_person_alternate_names_person_id"), "person_alternate_names", ["person_id"]
    )
    op.create_table(
        "person_links",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("incident_id", sa.String(length=40), nullable=False),
        sa.Column("person_a_id", sa.String(length=40), nullable=False),
        sa.Column("person_b_id", sa.String(length=40), nullable=False),
        sa.Column("decided_on_person_id", sa.String(length=40), nullable=False),
        sa.Column("decision", sa.String(length=20), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("decided_at", trace_app.store.types.UTCDateTime(), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"],
            ["incidents.id"],
            name=op.f("fk_person_links_incident_id_incidents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_a_id"],
            ["people.id"],
            name=op.f("fk_person_links_person_a_id_people"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_b_id"],
            ["people.id"],
            name=op.f("fk_person_links_person_b_id_people"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_person_links")),
        sa.UniqueConstraint(
            "person_a_id", "person_b_id", "sequence", name="uq_person_links_sequence"
        ),
    )
    op.create_index(op.f("ix_person_links_incident_id"), "person_links", ["incident_id"])
    op.create_index(op.f("ix_person_links_person_a_id"), "person_links", ["person_a_id"])
    op.create_index(op.f("ix_person_links_person_b_id"), "person_links", ["person_b_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_person_links_person_b_id"), table_name="person_links")
    op.drop_index(op.f("ix_person_links_person_a_id"), table_name="person_links")
    op.drop_index(op.f("ix_person_links_incident_id"), table_name="person_links")
    op.drop_table("person_links")
    op.drop_index(op.f("ix_person_alternate_names_person_id"), table_name="person_alternate_names")
    op.drop_index("ix_person_alternate_names_incident_key", table_name="person_alternate_names")
    op.drop_table("person_alternate_names")
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.drop_index("ix_people_incident_name_key")
        batch_op.alter_column(
            "search_key",
            existing_type=sa.Text(),
            type_=sa.String(length=800),
            existing_nullable=False,
            existing_server_default="",
        )
        batch_op.create_unique_constraint("uq_people_incident_name", ["incident_id", "name_key"])
