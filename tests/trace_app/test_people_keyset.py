"""Keyset pages of the incident's people listing (ADR 0086): walked from the first page
to the last by their cursors they give exactly the offset listing, on SQLite and on
PostgreSQL (the ``database`` fixture runs on both), shared names and linked groups
included; a cursor Trace did not write is refused, as a 422 over HTTP, never a 500."""

from __future__ import annotations

import base64
import itertools
import json
import random
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR
from fastapi.testclient import TestClient
from sqlalchemy import insert

from trace_app.domain import people_cursor, people_queries, queries
from trace_app.domain.errors import BadCursorError
from trace_app.domain.links import decide_link
from trace_app.domain.people_cursor import PeopleCursor
from trace_app.domain.search import people_search_key
from trace_app.domain.text import name_key
from trace_app.store.db import Database
from trace_app.store.models import Incident, LinkDecision, Person
from trace_app.store.types import new_id

# few first and last names, so that many people share a name (and a name key): the
# order's tie on the name is broken by the id, across page boundaries too
FIRST = ["Sita", "sita", "SITA ", "Ram", "Ñima", "Ангела", "सुनिता", "Zoë", "Ana", "Aña"]
LAST = ["Rai", "Gurung", "rai", "Таманг", ""]


def add_people(database: Database, incident_id: str, count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        name = " ".join(f"{rng.choice(FIRST)} {rng.choice(LAST)}".split())
        rows.append(
            {
                "id": new_id("per"),
                "incident_id": incident_id,
                "name": name,
                "name_key": name_key(name),
                "search_key": people_search_key([name]),
                "age": i % 90,
            }
        )
    with database.session() as s:
        s.execute(insert(Person), rows)
    return [str(row["id"]) for row in rows]


def make_incident(database: Database, name: str = "Keyset Test") -> str:
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=name)
        s.add(incident)
        return incident.id


def walk(database: Database, incident_id: str, limit: int) -> list[queries.Page[Any]]:
    pages = []
    after: str | None = None
    with database.sessions() as s:
        while True:
            page = people_queries.people_page_after(s, incident_id, after=after, limit=limit)
            pages.append(page)
            after = page.next_after
            if after is None:
                return pages
            assert len(pages) < 1000, "the cursors never end"


def ids(pages: list[queries.Page[Any]]) -> list[str]:
    return [p.id for page in pages for p in page.items]


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_keyset_walk_equals_the_offset_listing(database: Database, limit: int) -> None:
    incident_id = make_incident(database)
    make_incident(database, "Another incident")  # its people are never listed here
    add_people(database, incident_id, 60)
    add_people(database, make_incident(database, "Third"), 10, seed=4)
    with database.sessions() as s:
        whole = people_queries.people_page(s, incident_id, limit=500)
        by_offset = [
            people_queries.people_page(s, incident_id, offset=o, limit=limit)
            for o in range(0, whole.total, limit)
        ]
    pages = walk(database, incident_id, limit)
    assert whole.total == 60 and len(whole.items) == 60
    assert ids(pages) == ids(by_offset) == [p.id for p in whole.items]
    # every page as offset paging shows it: the same rows, numbering and next link
    assert len(pages) == len(by_offset)
    for keyset, offset in zip(pages, by_offset, strict=True):
        assert [p.id for p in keyset.items] == [p.id for p in offset.items]
        assert (keyset.offset, keyset.total, keyset.number, keyset.pages) == (
            offset.offset,
            offset.total,
            offset.number,
            offset.pages,
        )
        assert keyset.has_next == offset.has_next == (keyset.next_after is not None)
        assert keyset.has_previous == offset.has_previous
    # by name key, then id: a total order
    with database.sessions() as s:
        keys = {p.id: p.name_key for p in s.query(Person).filter_by(incident_id=incident_id)}
    order = [(keys[i], i) for i in ids(pages)]
    assert len(set(keys.values())) < 60  # names are shared
    assert order == sorted(order) or database.engine.dialect.name == "postgresql"


def test_keyset_order_is_the_database_order_on_both(database: Database) -> None:
    """PostgreSQL compares keys by its collation; the order is whatever the database's
    ORDER BY gives, and the cursor's comparison agrees with it (the walk above), so
    here only the tie-break on the id is checked, which no collation changes."""
    incident_id = make_incident(database)
    add_people(database, incident_id, 40)
    with database.sessions() as s:
        keys = {p.id: p.name_key for p in s.query(Person).filter_by(incident_id=incident_id)}
    listed = ids(walk(database, incident_id, 6))
    for a, b in itertools.pairwise(listed):
        if keys[a] == keys[b]:
            assert a < b


def test_a_linked_group_is_one_row_on_keyset_pages(database: Database) -> None:
    incident_id = make_incident(database)
    people = add_people(database, incident_id, 30)
    with database.session() as s:
        decide_link(s, people[0], people[1], LinkDecision.SAME, "same family", actor=TEST_OPERATOR)
        decide_link(s, people[1], people[2], LinkDecision.SAME, "same card", actor=TEST_OPERATOR)
    lead = min(people[:3])
    pages = walk(database, incident_id, 4)
    listed = ids(pages)
    assert len(listed) == len(set(listed)) == 28
    assert lead in listed and not set(people[:3]) - {lead} & set(listed)
    row = next(p for page in pages for p in page.items if p.id == lead)
    assert len(row.other_names) == 2
    assert pages[0].total == 28
    with database.sessions() as s:
        assert listed == [p.id for p in people_queries.people_page(s, incident_id, limit=500).items]


def test_pages_after_a_change_show_no_row_twice_and_skip_none(database: Database) -> None:
    """A person added before the cursor shifts the numbering, not the rows."""
    incident_id = make_incident(database)
    add_people(database, incident_id, 20)
    with database.sessions() as s:
        first = people_queries.people_page_after(s, incident_id, after=None, limit=8)
    assert first.next_after is not None
    with database.session() as s:
        s.add(
            Person(
                id=new_id("per"),
                incident_id=incident_id,
                name="Aaron Aa",
                name_key=name_key("Aaron Aa"),
                search_key="aaron aa",
            )
        )
    with database.sessions() as s:
        rest = people_queries.people_page_after(s, incident_id, after=first.next_after, limit=500)
        whole = people_queries.people_page(s, incident_id, limit=500)
    seen = [p.id for p in first.items] + [p.id for p in rest.items]
    assert len(set(seen)) == len(seen) == 20
    assert rest.total == 21 and rest.offset == 8 and rest.next_after is None
    assert [p.id for p in whole.items][1:] == seen  # "aaron aa" comes first


def test_keyset_pages_run_four_statements(
    database: Database, seeded: str, count_statements: Any
) -> None:
    add_people(database, seeded, 30)
    with database.sessions() as s:
        first = people_queries.people_page_after(s, seeded, after=None, limit=10)
    with database.sessions() as s, count_statements(database.engine) as counter:
        people_queries.people_page_after(s, seeded, after=first.next_after, limit=10)
    assert counter.count == 4  # count, rows, the listed groups' other records, claims


@pytest.mark.parametrize(
    "key", ["", "zzzz", "\uffff", "a" * 800, "सुनिता", "'; drop table people; --", "%_\\"]
)
def test_any_well_formed_cursor_is_a_position(database: Database, key: str) -> None:
    """A cursor Trace did not write but could have is read as a position: no error on
    either database, only people after it."""
    incident_id = make_incident(database)
    add_people(database, incident_id, 12)
    after = people_cursor.encode(PeopleCursor(key, "per_0", 3))
    with database.sessions() as s:
        page = people_queries.people_page_after(s, incident_id, after=after, limit=50)
        whole = people_queries.people_page(s, incident_id, limit=50)
    assert page.total == 12 and page.offset == 3
    listed = [p.id for p in whole.items]
    assert [p.id for p in page.items] == listed[len(listed) - len(page.items) :]


def test_cursor_round_trip() -> None:
    cursor = PeopleCursor("सुनिता राई", "per_0123abc", 150)
    raw = people_cursor.encode(cursor)
    assert set(raw) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert people_cursor.decode(raw) == cursor
    longest = people_cursor.encode(PeopleCursor("\U0001f600" * 600, "p" * 100, 10**9))
    assert len(longest) <= people_cursor.MAX_CURSOR_CHARACTERS


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _json(value: object) -> str:
    return _b64(json.dumps(value).encode())


GOOD = people_cursor.encode(PeopleCursor("sita rai", "per_1", 50))
TAMPERED = [
    GOOD[:-1],  # cut short
    GOOD[:-2],
    GOOD[:10],
    GOOD + "=",
    GOOD + "A",
    GOOD[1:],
    GOOD.replace(GOOD[5], "." if GOOD[5] != "." else "-"),
    "x" * (people_cursor.MAX_CURSOR_CHARACTERS + 1),
    "not a cursor",
    "!!!",
    "\x00",
    "é",
    _b64(b"\xff\xfe not utf-8"),
    _b64(b"not json"),
    _json([1, "a", "per_1", 0]),
    _json("a string"),
    _json({"v": 1, "k": "a", "i": "per_1"}),  # a key missing
    _json({"v": 1, "k": "a", "i": "per_1", "n": 0, "x": 1}),  # one more
    _json({"v": 2, "k": "a", "i": "per_1", "n": 0}),
    _json({"v": True, "k": "a", "i": "per_1", "n": 0}),
    _json({"v": 1, "k": 5, "i": "per_1", "n": 0}),
    _json({"v": 1, "k": None, "i": "per_1", "n": 0}),
    _json({"v": 1, "k": "a\x00b", "i": "per_1", "n": 0}),
    _b64(b'{"v": 1, "k": "\\ud800", "i": "per_1", "n": 0}'),  # a lone surrogate
    _json({"v": 1, "k": "a" * 801, "i": "per_1", "n": 0}),
    _json({"v": 1, "k": "a", "i": "per 1", "n": 0}),
    _json({"v": 1, "k": "a", "i": "", "n": 0}),
    _json({"v": 1, "k": "a", "i": "p" * 101, "n": 0}),
    _json({"v": 1, "k": "a", "i": 7, "n": 0}),
    _json({"v": 1, "k": "a", "i": "per_1", "n": -1}),
    _json({"v": 1, "k": "a", "i": "per_1", "n": 1.5}),
    _json({"v": 1, "k": "a", "i": "per_1", "n": False}),
    _json({"v": 1, "k": "a", "i": "per_1", "n": 10**9 + 1}),
    _b64(b'{"v": 1, "k": "a", "i": "per_1", "n": 1e999}'),
    _b64(b"[" * 3000),
]


@pytest.mark.parametrize("raw", TAMPERED)
def test_a_tampered_cursor_is_refused(raw: str) -> None:
    with pytest.raises(BadCursorError) as refused:
        people_cursor.decode(raw)
    assert refused.value.code == "bad_cursor"
    assert "after" in str(refused.value)


# --- over HTTP (the seeded demo on SQLite, signed in as an admin) ---------------------


def _fill(web: TestClient, incident_id: str, count: int) -> None:
    add_people(web.app.state.db, incident_id, count)  # type: ignore[attr-defined]


def test_api_walks_the_cursor_to_the_offset_listing(web: TestClient, incident_id: str) -> None:
    _fill(web, incident_id, 40)
    url = f"/api/incidents/{incident_id}/people"
    whole = web.get(url, params={"limit": 500}).json()
    assert whole["next_after"] is None
    walked: list[str] = []
    first = web.get(url, params={"limit": 9}).json()
    assert first["next_after"]
    page = first
    while True:
        walked += [p["id"] for p in page["items"]]
        assert page["offset"] == len(walked) - len(page["items"])
        assert page["total"] == whole["total"]
        if page["next_after"] is None:
            break
        response = web.get(url, params={"limit": 9, "after": page["next_after"]})
        assert response.status_code == 200
        page = response.json()
    assert walked == [p["id"] for p in whole["items"]]
    # offset paging is unchanged, and gives the cursor too
    second = web.get(url, params={"limit": 9, "offset": 9}).json()
    assert [p["id"] for p in second["items"]] == walked[9:18]
    assert second["next_after"]
    assert web.get(url, params={"after": ""}).json()["items"] == whole["items"][:100]


@pytest.mark.parametrize("raw", [TAMPERED[0], TAMPERED[13], TAMPERED[23], "%%%", "a b"])
def test_api_refuses_a_tampered_cursor_with_422(
    web: TestClient, incident_id: str, raw: str
) -> None:
    response = web.get(f"/api/incidents/{incident_id}/people", params={"after": raw})
    assert response.status_code == 422
    assert response.json() == {"detail": people_cursor.BAD_CURSOR_MESSAGE, "code": "bad_cursor"}


def test_api_refuses_after_with_a_search_or_an_offset(web: TestClient, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/people"
    for params in ({"q": "maya"}, {"status": "missing"}, {"alert": "open"}, {"offset": 5}):
        response = web.get(url, params={"after": GOOD, **params})
        assert response.status_code == 422, params
        assert response.json()["code"] == "invalid_input"
        assert "after" in response.json()["detail"]
    searched = web.get(url, params={"q": "maya"}).json()
    assert searched["items"] and searched["next_after"] is None


def test_api_documents_the_cursor(web: TestClient) -> None:
    operation = web.get("/openapi.json").json()["paths"]["/api/incidents/{incident_id}/people"]
    get = operation["get"]
    assert "after" in {p["name"] for p in get["parameters"]}
    assert "bad_cursor" in get["responses"]["422"]["description"]


def test_people_page_next_link_carries_the_cursor(web: TestClient, incident_id: str) -> None:
    _fill(web, incident_id, 120)
    url = f"/incidents/{incident_id}/people"
    first = web.get(url)
    assert first.status_code == 200
    cursor = first.text.split('rel="next" href="')[1].split('"')[0]
    assert cursor.startswith(f"{url}?after=")
    second = web.get(cursor)
    by_number = web.get(url, params={"page": 2})
    assert second.status_code == by_number.status_code == 200
    assert "Page 2 of 3" in second.text and 'rel="prev"' in second.text
    assert f'href="{url}?page=1"' in second.text  # back by page number

    def listed(html: str) -> list[str]:
        return [part.split('"')[0] for part in html.split('class="person" id="person-')[1:]]

    assert listed(second.text) == listed(by_number.text) and len(listed(second.text)) == 50
    assert '<ol class="people" start="51">' in second.text
    third = web.get(second.text.split('rel="next" href="')[1].split('"')[0])
    assert "Page 3 of 3" in third.text and 'rel="next"' not in third.text
    assert listed(third.text) == listed(web.get(url, params={"page": 3}).text)


def test_people_page_refuses_a_tampered_cursor(web: TestClient, incident_id: str) -> None:
    url = f"/incidents/{incident_id}/people"
    for raw in (TAMPERED[0], "garbage!", TAMPERED[23]):
        response = web.get(url, params={"after": raw})
        assert response.status_code == 422
        assert "This page link is not valid" in response.text
    searched = web.get(url, params={"after": GOOD, "q": "maya"})
    assert searched.status_code == 422 and "A search is paged by page number" in searched.text
    # a search pages by number, as before
    assert web.get(url, params={"q": "maya", "page": "1"}).status_code == 200


def test_group_members_use_the_group_index_after_analyze(tmp_path: Any) -> None:
    """After ANALYZE, SQLite reads a column null in every row as one value shared by all,
    and would scan every person for the listed page's group members; ``rare`` tells it
    otherwise (``trace_app.store.sql.rare``)."""
    from sqlalchemy import text
    from sqlalchemy.dialects import sqlite

    from trace_app.store.db import make_engine, migrate

    database = Database(make_engine(f"sqlite:///{tmp_path / 'plan.db'}"))
    migrate(database.engine)
    add_people(database, make_incident(database), 300)
    statement = people_queries._GROUP_MEMBERS.params(keys=["per_a", "per_b"])
    sql = str(statement.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))
    with database.engine.begin() as conn:
        conn.execute(text("ANALYZE"))
        plan = " ".join(str(row) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
    database.dispose()
    assert "ix_people_group_id" in plan, plan
