"""The people listing's order as an index: (incident_id, name_key, id)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04

The incident's people are listed by name, then id (several people may share a name), and
paged by keyset: the page after a cursor is the rows after its ``(name_key, id)``
(docs/decisions/0086-keyset-pages-for-the-people-list.md). The index on
``(incident_id, name_key)`` holds the name but not the id, so it gives way to one that
holds both; lookups by name use its first two columns as before. Plain ``CREATE INDEX``
and ``DROP INDEX`` on both databases: ``people`` is not rebuilt, so SQLite's trigram
table and its triggers (migration 0014) are left as they are.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NEW = "ix_people_incident_name_key_id"
OLD = "ix_people_incident_name_key"


def upgrade() -> None:
    op.create_index(NEW, "people", ["incident_id", "name_key", "id"])
    op.drop_index(OLD, table_name="people")


def downgrade() -> None:
    op.create_index(OLD, "people", ["incident_id", "name_key"])
    op.drop_index(NEW, table_name="people")
