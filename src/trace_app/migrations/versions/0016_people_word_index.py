"""A word index over people's search keys

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03

The typo neighbours of a one-word search are found among the incident's distinct words,
then the people holding them (``trace_app.store.word_index``, ADR 0087): two tables kept
by triggers on ``people`` (and ``incidents``), ``person_words`` (who holds a word) and
``name_words`` (the vocabulary, with a trigram index: GIN on PostgreSQL, FTS5 on SQLite),
filled here from the people already stored.
"""

from collections.abc import Sequence

from alembic import op

from trace_app.store import word_index

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    word_index.create_word_index(op.get_bind())


def downgrade() -> None:
    word_index.drop_word_index(op.get_bind())
