"""Many generated people in one incident, on SQLite or PostgreSQL (imported as a sibling
module by the scale benchmarks and the load test).

Names are built from syllables (mostly Latin letters, a tenth Devanagari, a tenth
Cyrillic), so they share trigrams the way real names do, with a fixed seed. People are
written with the rows ``match_or_create_person`` writes: executemany on SQLite (the
FTS5 triggers fill the index as they would), ``COPY`` on PostgreSQL.

``postgres_schema(url)`` gives a benchmark a fresh schema of the test server (dropped
after), with the ``pg_trgm`` extension's schema on its ``search_path``;
``migrated_database(kind, pg_url, name)`` a migrated Trace database of either kind.
"""

from __future__ import annotations

import random
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, insert, text
from sqlalchemy.engine import make_url

from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
LATIN = (
    "su ni ta ra ma ya gu rung an il bi nod sha de ep ak ka ma la ti sh re st ha "
    "ta man tha pa kar ki da hal lam go pal ja ya ku mar na ra ya n hi ra pu sp"
).split()
DEVANAGARI = "सु नि ता रा ई मा या गु रु अ न बि नो द का ल ती श".split()
CYRILLIC = "су ни та ра ма я гу рунг ан ил би нод ка ли ти ша".split()
TARGET = "सुनिता राई"  # the one person every benchmark looks for


def _word(rng: random.Random, syllables: list[str]) -> str:
    return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3)))


def names(count: int, seed: int = 7) -> Iterator[str]:
    """``count`` generated names, the last one :data:`TARGET`."""
    rng = random.Random(seed)
    for _ in range(count - 1):
        roll = rng.random()
        script = DEVANAGARI if roll < 0.1 else CYRILLIC if roll < 0.2 else LATIN
        first, last = _word(rng, script), _word(rng, script)
        yield f"{first} {last}".title() if script is not DEVANAGARI else f"{first} {last}"
    yield TARGET


# Real lists repeat names (issue 43): a few first and family names hold most people. The
# common-name corpus draws both from Zipf-like weights (the k-th most common 1/k as
# likely) over Nepali, Arabic, Spanish and English names, the commonest first, so that
# "Maya Gurung" is the commonest full name (about one person in 40: 7,500 of 300,000);
# a third of the people carry a number that tells namesakes apart ("Maya Gurung 42"),
# as registration lists do.
FIRST_NAMES = (
    "Maya Mohammad Maria Sita Ali Jose Ram Fatima John Ana Krishna Ahmed Juan Mary Gita "
    "Omar Carmen David Laxmi Hassan Luis Sarah Bishnu Aisha Carlos James Sunita Youssef "
    "Rosa Michael Hari Layla Pedro Elizabeth Kamala Ibrahim Lucia William Durga Khalid"
).split()
FAMILY_NAMES = (
    "Gurung Ali Garcia Smith Tamang Hassan Rodriguez Johnson Shrestha Khan Lopez Brown "
    "Thapa Ahmed Martinez Jones Magar Hussein Hernandez Williams Rai Ibrahim Gonzalez "
    "Taylor Lama Abdullah Perez Davies Karki Mahmoud"
).split()
COMMONEST = "Maya Gurung"
RARE = "Pemba Sherpa"  # held once (the last person but one): no word of the lists above


def _zipf(count: int) -> list[float]:
    return [1.0 / rank for rank in range(1, count + 1)]


def common_names(count: int, seed: int = 7) -> Iterator[str]:
    """``count`` names drawn as real lists look (see :data:`FIRST_NAMES`), then
    :data:`RARE` and :data:`TARGET`."""
    rng = random.Random(seed)
    firsts = rng.choices(FIRST_NAMES, weights=_zipf(len(FIRST_NAMES)), k=max(0, count - 2))
    families = rng.choices(FAMILY_NAMES, weights=_zipf(len(FAMILY_NAMES)), k=len(firsts))
    for first, family in zip(firsts, families, strict=True):
        number = rng.random() < 1 / 3
        yield f"{first} {family} {rng.randint(1, 999)}" if number else f"{first} {family}"
    if count >= 2:
        yield RARE
    yield TARGET


CORPORA = {"syllables": names, "common": common_names}


def rows(
    incident_id: str, count: int, seed: int = 7, corpus: str = "syllables"
) -> Iterator[dict[str, object]]:
    for i, name in enumerate(CORPORA[corpus](count, seed)):
        yield {
            "id": new_id("per"),
            "incident_id": incident_id,
            "name": name,
            "name_key": name_key(name),
            "search_key": people_search_key([name]),
            "age": i % 90,
        }


def fill(
    engine: Engine,
    count: int,
    seed: int = 7,
    incident_name: str = "",
    corpus: str = "syllables",
    analyze: bool = True,
) -> str:
    """A new incident holding ``count`` generated people (names from ``corpus``:
    ``syllables`` or ``common``, see :data:`CORPORA`); returns its id. ``analyze``
    False leaves SQLite without statistics, as Trace leaves a deployment (it never runs
    ``ANALYZE``; PostgreSQL's autovacuum gathers them, so they are gathered there)."""
    incident_id = new_id("inc")
    with engine.begin() as conn:
        conn.execute(
            insert(Incident.__table__),  # type: ignore[arg-type]
            [{"id": incident_id, "name": incident_name or f"Scale {count:,} {incident_id[-6:]}"}],
        )
    if engine.dialect.name == "postgresql":
        _copy(engine, incident_id, count, seed, corpus)
    else:
        batch: list[dict[str, object]] = []
        with engine.begin() as conn:
            for row in rows(incident_id, count, seed, corpus):
                batch.append(row)
                if len(batch) == 20_000:
                    conn.execute(insert(Person.__table__), batch)  # type: ignore[arg-type]
                    batch = []
            if batch:
                conn.execute(insert(Person.__table__), batch)  # type: ignore[arg-type]
    if engine.dialect.name == "postgresql":
        # What autovacuum does within minutes of a bulk load (it starts after inserts of
        # a fifth of a table): the visibility map that lets index-only scans of the word
        # index skip the table. Measured before it, a lookup also reads the rows.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table_name in ("people", "person_words", "name_words"):
                conn.execute(text(f"VACUUM (ANALYZE) {table_name}"))
    elif analyze:
        with engine.begin() as conn:
            conn.execute(text("ANALYZE"))
    return incident_id


def _copy(engine: Engine, incident_id: str, count: int, seed: int, corpus: str) -> None:
    columns = ("id", "incident_id", "name", "name_key", "search_key", "age")
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        sql = f"COPY people ({', '.join(columns)}) FROM STDIN"
        with cursor.copy(sql) as copy:  # type: ignore[attr-defined]
            for row in rows(incident_id, count, seed, corpus):
                copy.write_row([row[c] for c in columns])
        raw.commit()
    finally:
        raw.close()


@contextmanager
def postgres_schema(url: str = DEFAULT_PG) -> Iterator[str]:
    """A URL on a fresh schema of ``url``'s database (dropped afterwards) whose
    ``search_path`` also holds the ``pg_trgm`` extension's schema."""
    server = make_url(url)
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    find = text(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'pg_trgm'"
    )
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        trgm = conn.execute(find).scalar()
        if trgm is None:
            conn.execute(text("CREATE SCHEMA IF NOT EXISTS trace_pg_trgm"))
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA trace_pg_trgm"))
            trgm = "trace_pg_trgm"
    try:
        yield server.update_query_dict(
            {"options": f"-csearch_path={schema},{trgm}"}
        ).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@contextmanager
def migrated_database(
    kind: str, pg_url: str = DEFAULT_PG, name: str = "bench"
) -> Iterator[Database]:
    """A migrated Trace database: ``sqlite`` in a temporary folder (file ``name``.db), or
    ``postgres`` in a fresh schema of ``pg_url`` (:func:`postgres_schema`); gone after."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            db = Database(make_engine(f"sqlite:///{Path(folder) / f'{name}.db'}"))
            migrate(db.engine)
            yield db
            db.dispose()
    else:
        with postgres_schema(pg_url) as url:
            db = Database(make_engine(url))
            migrate(db.engine)
            yield db
            db.dispose()
