"""The name as search matches it, stored on each person

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

``people.search_key`` holds the transliterated, case-folded form of the name
(``trace_app.domain.search.search_key``), so that a search never transliterates an
incident's names again. People stored before this revision get theirs here.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from trace_app.domain.search import search_key

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("search_key", sa.String(length=800), nullable=False, server_default="")
        )
    people = sa.table(
        "people",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("search_key", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(people.c.id, people.c.name)).all()
    for row in rows:
        connection.execute(
            people.update().where(people.c.id == row.id).values(search_key=search_key(row.name))
        )


def downgrade() -> None:
    with op.batch_alter_table("people", schema=None) as batch_op:
        batch_op.drop_column("search_key")
