"""The account's preferred language (issue 42)

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04

``users`` gains ``language`` (nullable: an account that never chose one follows its
browser's ``Accept-Language``). ``?lang=xx`` sets it once signed in
(docs/decisions/0170-languages-through-gettext-catalogues.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.add_column(sa.Column("language", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch_op:
        batch_op.drop_column("language")
