"""Tracing requests, the outbox and its deliveries (issue 41)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04

Six new tables: ``inquiries`` (who is looking for a person, and their contacts, taken with
consent), ``outbox_events`` (a change to tell subscribers about, written in the change's
transaction), ``deliveries`` (one event to one target on one channel; unique per event,
channel and target, indexed by state and due time for the worker), ``webhook_endpoints``,
``follow_ups`` (inform a family in person) and ``inquiry_links`` (the SHA-256 of mailed
confirm and unsubscribe tokens). ``incidents`` gains ``contact_retention_days`` (server
default 90, so existing incidents keep contacts 90 days after an inquiry closes).
Plain ``CREATE TABLE`` and ``ALTER TABLE ... ADD COLUMN`` on both databases
(docs/decisions/0180-notifications-outbox.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from trace_app.store.types import UTCDateTime

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(length=40)


def _incident_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["incident_id"],
        ["incidents.id"],
        name=op.f(f"fk_{table}_incident_id_incidents"),
        ondelete="CASCADE",
    )


def _index(table: str, column: str) -> None:
    op.create_index(op.f(f"ix_{table}_{column}"), table, [column], unique=False)


def upgrade() -> None:
    with op.batch_alter_table("incidents") as batch_op:
        batch_op.add_column(
            sa.Column("contact_retention_days", sa.Integer(), server_default="90", nullable=False)
        )
    op.create_table(
        "inquiries",
        sa.Column("id", ID, nullable=False),
        sa.Column("incident_id", ID, nullable=False),
        sa.Column("person_id", ID, nullable=False),
        sa.Column("enquirer_name", sa.String(length=200), nullable=True),
        sa.Column("relationship", sa.String(length=100), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("phone", sa.String(length=40), nullable=True),
        sa.Column("language", sa.String(length=20), server_default="en", nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("consent_at", UTCDateTime(), nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("closed_at", UTCDateTime(), nullable=True),
        sa.Column("email_confirmed_at", UTCDateTime(), nullable=True),
        sa.Column("unsubscribed_at", UTCDateTime(), nullable=True),
        sa.Column("contacts_erased_at", UTCDateTime(), nullable=True),
        sa.Column("erased_by", sa.String(length=200), nullable=True),
        _incident_fk("inquiries"),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["people.id"],
            name=op.f("fk_inquiries_person_id_people"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inquiries")),
    )
    _index("inquiries", "incident_id")
    _index("inquiries", "person_id")
    op.create_table(
        "outbox_events",
        sa.Column("id", ID, nullable=False),
        sa.Column("incident_id", ID, nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("person_id", ID, nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("fanned_out_at", UTCDateTime(), nullable=True),
        _incident_fk("outbox_events"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_events")),
    )
    _index("outbox_events", "incident_id")
    _index("outbox_events", "person_id")
    op.create_index(
        "ix_outbox_events_pending", "outbox_events", ["fanned_out_at", "created_at"], unique=False
    )
    op.create_table(
        "deliveries",
        sa.Column("id", ID, nullable=False),
        sa.Column("event_id", ID, nullable=False),
        sa.Column("channel", sa.String(length=20), nullable=False),
        sa.Column("target_id", ID, nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=False),
        sa.Column("lease_until", UTCDateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["outbox_events.id"],
            name=op.f("fk_deliveries_event_id_outbox_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
        sa.UniqueConstraint("event_id", "channel", "target_id", name="uq_deliveries_target"),
    )
    _index("deliveries", "event_id")
    op.create_index("ix_deliveries_due", "deliveries", ["state", "next_attempt_at"], unique=False)
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", ID, nullable=False),
        sa.Column("incident_id", ID, nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("events", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("removed_at", UTCDateTime(), nullable=True),
        _incident_fk("webhook_endpoints"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
    )
    _index("webhook_endpoints", "incident_id")
    op.create_table(
        "follow_ups",
        sa.Column("id", ID, nullable=False),
        sa.Column("incident_id", ID, nullable=False),
        sa.Column("person_id", ID, nullable=False),
        sa.Column("event_id", ID, nullable=True),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("done_at", UTCDateTime(), nullable=True),
        sa.Column("done_by", sa.String(length=200), nullable=True),
        _incident_fk("follow_ups"),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["outbox_events.id"],
            name=op.f("fk_follow_ups_event_id_outbox_events"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_follow_ups")),
    )
    _index("follow_ups", "incident_id")
    _index("follow_ups", "person_id")
    op.create_table(
        "inquiry_links",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("inquiry_id", ID, nullable=False),
        sa.Column("purpose", sa.String(length=20), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("used_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["inquiry_id"],
            ["inquiries.id"],
            name=op.f("fk_inquiry_links_inquiry_id_inquiries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_inquiry_links")),
    )
    _index("inquiry_links", "inquiry_id")


def downgrade() -> None:
    op.drop_table("inquiry_links")
    op.drop_table("follow_ups")
    op.drop_table("webhook_endpoints")
    op.drop_table("deliveries")
    op.drop_table("outbox_events")
    op.drop_table("inquiries")
    op.drop_column("incidents", "contact_retention_days")
