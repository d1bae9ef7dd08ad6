"""Names are data, never query syntax (issue 38, hole 3): search and duplicate finding
build every FTS5 query (SQLite) and every ``pg_trgm`` pattern (PostgreSQL) from quoted
search keys, so a person named "Li Li" or "=1+1" (a name reducing to one repeated word
of one or two letters left FTS5 an empty query: HTTP 500 on the person page and the
import preview), or holding quotes, stars, parentheses, ``AND`` or ``NEAR``, opens like
any other, with the same results as a scan of every name (both databases)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session
from test_name_index import Someone, all_rows, full_scan_duplicates, make_incident

from trace_app.domain.identity import duplicate_candidates
from trace_app.domain.search import one_typo_away, rank, search_key, search_people
from trace_app.store import name_index
from trace_app.store.db import Database
from trace_app.store.models import Person
from trace_app.store.sql import fts5_any, fts5_query, fts5_string

# what shelter lists and spreadsheets put in a name field: formula characters, FTS5's
# own syntax (quotes, stars, carets, parentheses, colons, plus and minus), LIKE and
# regular-expression characters
PUNCTUATION = "=+-@*/^\"'():;,.!?%_\\[]{}|&<>#$~`"
WORD = st.text(alphabet="lianbo19", min_size=1, max_size=3)
SEPARATOR = st.one_of(st.just(" "), st.text(alphabet=PUNCTUATION + " ", min_size=1, max_size=2))
KEYWORDS = st.sampled_from(["AND", "OR", "NOT", "NEAR", "and", "or"])


@st.composite
def short_names(draw: st.DrawFn) -> str:
    """One to three short words (a word may repeat, or be an FTS5 keyword), joined by
    spaces, punctuation or formula characters, maybe opening with one ("=1+1")."""
    words = draw(st.lists(st.one_of(WORD, KEYWORDS), min_size=1, max_size=3))
    if len(words) > 1 and draw(st.booleans()):
        words = [words[0]] * len(words)  # "Li Li", "ab ab ab"
    name = words[0]
    for word in words[1:]:
        name += draw(SEPARATOR) + word
    opening = draw(st.sampled_from(["", "", "=", "+", "-", "@", '"', "*", "("]))
    return opening + name + draw(st.sampled_from(["", "", '"', "*", ")", "^"]))


@st.composite
def incidents(draw: st.DrawFn) -> tuple[str, list[Someone]]:
    """A drawn name, and people around it: its words joined ("Lili"), a letter doubled
    or left out, the same name again, other short names."""
    name = draw(short_names())
    key = search_key(name)
    around = [key.replace(" ", ""), key + key[-1:], key[1:], name]
    people = [Someone(name, None, ())]
    people += [
        Someone(other, None, ()) for other in around if other.strip() and draw(st.booleans())
    ]
    people += [Someone(other, None, ()) for other in draw(st.lists(short_names(), max_size=3))]
    return name, people


def assert_search_like_the_full_scan(s: Session, incident_id: str, q: str) -> None:
    """What ``tests/trace_app/test_name_index.py`` promises of the search, for ``q``."""
    key = search_key(q)
    indexed = [(m.person_id, m.score) for m in search_people(s, incident_id, q=q)]
    rows = all_rows(s, incident_id)
    if not key:
        assert sorted(pid for pid, _ in indexed) == sorted(pid for pid, _, _ in rows)
        return
    full = [(m.person_id, m.score) for m in rank(key, rows)]
    if len(key) < name_index.TRIGRAM:
        words = {pid: stored.split() for pid, _, stored in rows}
        assert indexed == [hit for hit in full if any(w.startswith(key) for w in words[hit[0]])]
        return
    assert indexed == [hit for hit in full if hit in indexed]
    if len(key) >= name_index.PIECES_FROM:
        keys = {pid: stored for pid, _, stored in rows}
        near = [hit for hit in full if one_typo_away(key, keys[hit[0]])]
        assert [hit for hit in indexed if hit in near] == near
    else:
        assert [hit for hit in full if hit[1] == 100.0] == [h for h in indexed if h[1] == 100.0]


@settings(
    deadline=None,
    max_examples=20,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=incidents())
@example(drawn=("Li Li", [Someone("Li Li", None, ()), Someone("Lili", None, ())]))
@example(drawn=("=1+1", [Someone("=1+1", None, ()), Someone("11", None, ())]))
@example(drawn=('"a" AND b*', [Someone('"a" AND b*', None, ()), Someone("NEAR(a b)", None, ())]))
def test_short_names_with_punctuation_open_and_search_like_the_full_scan(
    database: Database, drawn: tuple[str, list[Someone]]
) -> None:
    name, people = drawn
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        persons = s.scalars(select(Person).where(Person.incident_id == incident_id)).all()
        for person in persons:
            assert duplicate_candidates(s, person) == full_scan_duplicates(s, person)
        for q in dict.fromkeys([name, search_key(name), name.upper()]):
            assert_search_like_the_full_scan(s, incident_id, q)


def test_fts5_queries_quote_every_string() -> None:
    assert fts5_string('a"b') == '"a""b"'
    assert fts5_any(["li"]) is None  # no trigram: nothing to ask, not an empty query
    assert fts5_any([]) is None
    assert fts5_any(["li ", "i l"]) == '("li ") OR ("i l")'
    assert fts5_query([["AND", "x"], ["NEAR(", "ab"]]) == '("AND") OR ("NEAR(")'


def test_import_preview_of_names_like_li_li(database: Database) -> None:
    """The import preview checks each new person's look-alikes (issue 38: it failed with
    the same FTS5 syntax error); "Li Li" is flagged next to "Lili"."""
    import io

    from accounts_helpers import TEST_OPERATOR

    from trace_app.domain import import_runs
    from trace_app.domain.import_runs import ImportKind, ImportRequest
    from trace_app.domain.incidents import create_incident

    with database.session() as s:
        incident_id = create_incident(s, "Shelter names", actor=TEST_OPERATOR).id
    rows = "full_name,age,last_known_location\nLili,30,Camp 4\nLi Li,30,Camp 4\n=1+1,9,Camp 4\n"
    with database.sessions() as s:
        outcome = import_runs.dry_run(
            s,
            ImportRequest(ImportKind.CSV, incident_id, source_name="Camp 4 list"),
            io.BytesIO(rows.encode()),
            domain="trace.example.org",
            max_bytes=1 << 20,
            actor=TEST_OPERATOR,
        )
    assert not outcome.refused, outcome.refused
    assert outcome.summary.people_added == 3
    assert "Li Li" in repr(outcome.summary.flagged), outcome.summary.flagged
