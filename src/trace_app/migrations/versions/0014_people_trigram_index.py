"""A trigram index over people's search keys

Revision ID: 0014
Revises: 0009
Create Date: 2026-12-03

Search and duplicate finding read candidates through an index instead of every person
of the incident (``trace_app.store.name_index``): on PostgreSQL the ``pg_trgm``
extension (created here when missing; a clear error when the database user may not) and
a GIN index on ``people.search_key``; on SQLite an FTS5 ``trigram`` table over
``people.search_key``, kept in step by triggers, and a B-tree on
``(incident_id, search_key)`` for queries shorter than a trigram.
"""

from collections.abc import Sequence

from alembic import op

from trace_app.store import name_index

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    name_index.create_index(op.get_bind())


def downgrade() -> None:
    name_index.drop_index(op.get_bind())
