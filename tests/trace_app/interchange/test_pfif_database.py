"""PFIF export and import on SQLite and PostgreSQL: mapping, round trip, idempotence,
all or nothing, identity rules, reviews and links."""

from __future__ import annotations

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select

from trace_app.domain.links import decide_link
from trace_app.domain.pfif_import import ImportRefusedError
from trace_app.domain.reviews import ReviewValue
from trace_app.interchange.pfif import PfifEntityError
from trace_app.store.db import Database
from trace_app.store.models import (
    LinkDecision,
    Person,
    PersonAlternateName,
    PersonLink,
    Report,
)

from .conftest import (
    DOMAIN,
    FIXTURES,
    comparable,
    counts,
    export,
    import_doc,
    new_incident,
    publish,
    publish_story,
    review,
    statuses,
)
from .person_finder_rules import person_finder_parse


def test_export_maps_each_claim_to_a_note_by_the_table(database: Database) -> None:
    incident = new_incident(database)
    publish_story(database, incident)
    persons, notes = person_finder_parse(export(database, incident))
    by_name = {p["full_name"]: p for p in persons}
    assert set(by_name) == {"Maya Gurung", "सुनिता राई", "王小明", "عمر حداد"}
    maya = by_name["Maya Gurung"]
    assert maya["person_record_id"].startswith(f"{DOMAIN}/per_")
    assert maya["age"] == "34" and maya["source_name"] == DOMAIN
    assert maya["source_date"] == "2026-07-14T06:00:00Z"  # its first report
    assert by_name["सुनिता राई"]["alternate_names"] == "Sunita Rai"
    mine = [n for n in notes if n["person_record_id"] == maya["person_record_id"]]
    assert [(n["status"] if "status" in n else "", n.get("last_known_location")) for n in mine] == [
        ("believed_missing", None),
        ("", "Bus park"),  # seen: a sighting with its place, no status
        ("believed_alive", "Central Hospital"),
    ]
    assert all(n["note_record_id"].startswith(f"{DOMAIN}/clm_") for n in notes)
    assert all(n["author_made_contact"] == "false" for n in notes)  # nobody reviewed
    statuses_by_name = {
        p["full_name"]: {
            n.get("status", "") for n in notes if n["person_record_id"] == p["person_record_id"]
        }
        for p in persons
    }
    assert statuses_by_name["王小明"] == {"believed_alive"}
    assert statuses_by_name["عمر حداد"] == {"believed_dead"}
    sunita_note = next(
        n for n in notes if n["person_record_id"] == by_name["सुनिता राई"]["person_record_id"]
    )
    assert sunita_note["author_name"] == "Камчатка Relief"
    assert sunita_note["text"] == "Камчатка Relief says सुनिता राई is missing."


def test_round_trip_into_a_new_incident_gives_the_same_people_notes_and_statuses(
    database: Database,
) -> None:
    first = new_incident(database, "Flood")
    publish_story(database, first)
    exported = export(database, first)
    copy = new_incident(database, "Flood copy")
    summary = import_doc(database, copy, exported)
    assert (summary.people_added, summary.notes_added, summary.invalid_count) == (4, 6, 0)
    again = export(database, copy)
    assert comparable(again) == comparable(exported)
    # in Trace terms: every status but admitted comes back (admitted is read as safe)
    assert statuses(database, copy) == {
        "Maya Gurung": ["missing", "seen", "safe"],
        "सुनिता राई": ["missing"],
        "王小明": ["safe"],
        "عمر حداد": ["deceased"],
    }
    # alerts by the one rule: Maya's closed by the later safe claim, Sunita's open
    assert counts(database, copy) == (4, 6, 1)
    assert counts(database, first)[2] == 1


def test_importing_the_same_file_twice_adds_nothing(database: Database) -> None:
    first = new_incident(database, "Flood")
    publish_story(database, first)
    exported = export(database, first)
    copy = new_incident(database, "Flood copy")
    import_doc(database, copy, exported)
    before = counts(database, copy)
    second = import_doc(database, copy, exported)
    assert (second.people_added, second.people_matched, second.notes_added) == (0, 0, 0)
    assert second.skipped_count == 10
    assert {s.reason for s in second.skipped} == {"already imported into this incident"}
    assert counts(database, copy) == before
    # an incident's own export into itself is recognised by its record ids
    own = import_doc(database, first, exported)
    assert own.notes_added == 0 and {s.reason for s in own.skipped} == {
        "this incident's own record"
    }


def test_a_pfif_1_4_registry_file_imports(database: Database) -> None:
    incident = new_incident(database)
    summary = import_doc(database, incident, (FIXTURES / "registry-1.4.xml").read_bytes())
    assert (summary.people_added, summary.notes_added, summary.invalid_count) == (3, 5, 0)
    assert [(s.record_id, s.reason.split(":")[0]) for s in summary.skipped] == [
        (
            "registry.example.net/note.9004",
            "a comment with no status, no last_known_location and no contact",
        )
    ]
    assert statuses(database, incident) == {
        "Lena Okafor": ["missing", "seen", "safe"],
        "Tomás Quispe": ["safe"],  # the top-level note before its person
        "سارا احمدی": ["deceased"],
    }
    assert counts(database, incident)[2] == 0  # Lena's alert closed by her own note
    with database.sessions() as s:
        sources = set(s.scalars(select(Report.summary)))
        assert "Her brother asked at the desk; she did not come home after the storm." in sources
        lena = s.scalars(select(Person).where(Person.name == "Lena Okafor")).one()
        assert lena.age == 40  # 38-42
        names = set(
            s.scalars(
                select(PersonAlternateName.name).where(PersonAlternateName.person_id == lena.id)
            )
        )
        assert names == {"Lena O. Okafor", "Mama Lena", "Lenny"}
        authors = {r.organization.name for r in s.scalars(select(Report))}
        # a note with no author_name comes from its repository's domain
        assert {"registry.example.net", "Harbour Registry desk", "Камчатка Relief"} <= authors
    flagged = [f for f in summary.flagged if f.record_id == "registry.example.net/note.9005"]
    assert flagged and "not decided here" in flagged[0].reason
    with database.sessions() as s:
        assert s.scalar(select(func.count()).select_from(PersonLink)) == 0  # no decision made
    # the export keeps the clone's record ids and the fields Trace has no column for
    persons, _notes = person_finder_parse(export(database, incident))
    lena_out = next(p for p in persons if p["full_name"] == "Lena Okafor")
    assert lena_out["person_record_id"] == "registry.example.net/person.501"
    assert (lena_out["given_name"], lena_out["family_name"], lena_out["age"]) == (
        "Lena",
        "Okafor",
        "38-42",
    )
    assert lena_out["source_name"] == "Harbour Registry"
    assert lena_out["description"] == "Wears a green scarf; last seen near the ferry."


def test_a_pfif_1_2_file_with_first_and_last_names_imports(database: Database) -> None:
    incident = new_incident(database)
    summary = import_doc(database, incident, (FIXTURES / "registry-1.2.xml").read_bytes())
    assert (summary.people_added, summary.notes_added, summary.invalid_count) == (2, 2, 0)
    assert statuses(database, incident) == {"Haruto 佐藤": ["safe"], "Yui Tanaka": ["missing"]}
    assert counts(database, incident)[2] == 1  # information_sought opens an alert
    persons, _ = person_finder_parse(export(database, incident))
    haruto = next(p for p in persons if p["full_name"] == "Haruto 佐藤")
    assert (haruto["given_name"], haruto["family_name"]) == ("Haruto", "佐藤")


BAD = b"""<?xml version="1.0" encoding="UTF-8"?>
<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4">
  <pfif:person>
    <pfif:person_record_id>x.org/good</pfif:person_record_id>
    <pfif:full_name>Good Person</pfif:full_name>
    <pfif:note><pfif:note_record_id>x.org/n-good</pfif:note_record_id>
      <pfif:author_name>Desk</pfif:author_name><pfif:status>believed_missing</pfif:status>
      <pfif:source_date>2026-07-14T06:00:00Z</pfif:source_date><pfif:text>Missing.</pfif:text>
    </pfif:note>
    <pfif:note><pfif:note_record_id>x.org/n-bad-date</pfif:note_record_id>
      <pfif:status>believed_alive</pfif:status><pfif:source_date>soon</pfif:source_date>
    </pfif:note>
    <pfif:note><pfif:note_record_id>x.org/n-future</pfif:note_record_id>
      <pfif:status>believed_alive</pfif:status><pfif:text>from the future</pfif:text>
      <pfif:source_date>2999-01-01T00:00:00Z</pfif:source_date>
    </pfif:note>
  </pfif:person>
  <pfif:person><pfif:person_record_id>x.org/nameless</pfif:person_record_id></pfif:person>
  <pfif:note><pfif:note_record_id>x.org/orphan</pfif:note_record_id>
    <pfif:person_record_id>x.org/nobody</pfif:person_record_id>
    <pfif:status>believed_dead</pfif:status><pfif:source_date>2026-07-14T06:00:00Z</pfif:source_date>
  </pfif:note>
</pfif:pfif>"""


def test_a_file_with_invalid_records_is_refused_whole(database: Database) -> None:
    incident = new_incident(database)
    with pytest.raises(ImportRefusedError) as caught:
        import_doc(database, incident, BAD)
    refused = caught.value.summary
    assert {r.record_id for r in refused.invalid} == {
        "x.org/n-bad-date",
        "x.org/n-future",
        "x.org/nameless",
        "x.org/orphan",
    }
    reasons = {r.record_id: " ".join(r.reasons) for r in refused.invalid}
    assert "not a date" in reasons["x.org/n-bad-date"]
    assert "future" in reasons["x.org/n-future"]
    assert "names no person" in reasons["x.org/orphan"]
    assert counts(database, incident) == (0, 0, 0)  # nothing half-written


def test_skip_invalid_keeps_the_valid_records_and_lists_the_others(database: Database) -> None:
    incident = new_incident(database)
    summary = import_doc(database, incident, BAD, skip_invalid=True)
    assert (summary.people_added, summary.notes_added, summary.invalid_count) == (1, 1, 4)
    assert counts(database, incident) == (1, 1, 1)


def test_an_external_entity_is_refused_and_nothing_is_written(database: Database) -> None:
    incident = new_incident(database)
    doc = (
        b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY e SYSTEM "file:///etc/hostname">]>'
        b'<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4"><pfif:person>'
        b"<pfif:person_record_id>x.org/1</pfif:person_record_id>"
        b"<pfif:full_name>A</pfif:full_name></pfif:person>"
        b"<pfif:person><pfif:full_name>&e;</pfif:full_name></pfif:person></pfif:pfif>"
    )
    with pytest.raises(PfifEntityError):
        import_doc(database, incident, doc)
    assert counts(database, incident) == (0, 0, 0)


def _person_doc(record: str, name: str, age: int) -> bytes:
    return (
        '<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4"><pfif:person>'
        f"<pfif:person_record_id>{record}</pfif:person_record_id>"
        f"<pfif:full_name>{name}</pfif:full_name><pfif:age>{age}</pfif:age>"
        "</pfif:person></pfif:pfif>"
    ).encode()


def test_no_silent_merge_and_look_alikes_are_flagged(database: Database) -> None:
    incident = new_incident(database)
    publish(database, incident, "Maya Gurung", "missing", age=30)
    older = import_doc(database, incident, _person_doc("x.org/1", "Maya Gurung", 60))
    assert older.people_added == 1  # ages conflict: a new person, never merged
    assert any("same" in f.reason.lower() for f in older.flagged), older.flagged
    close = import_doc(database, incident, _person_doc("x.org/2", "Maya Gurung", 31))
    # 31 fits only the 30-year-old: the one confident match
    assert (close.people_added, close.people_matched) == (0, 1)
    ageless = _person_doc("x.org/4", "Maya Gurung", 0).replace(b"<pfif:age>0</pfif:age>", b"")
    several = import_doc(database, incident, ageless)
    # no age fits both: several people could be meant, so code picks none (a new person)
    assert several.people_added == 1
    cyrillic = import_doc(database, incident, _person_doc("x.org/3", "Мауа Gurung", 30))
    assert cyrillic.people_added == 1 and cyrillic.flagged
    assert counts(database, incident)[0] == 4


def test_a_confident_match_attaches_and_says_so(database: Database) -> None:
    incident = new_incident(database)
    publish(database, incident, "Maya Gurung", "missing", age=30)
    summary = import_doc(database, incident, _person_doc("x.org/1", "maya  gurung", 31))
    assert (summary.people_added, summary.people_matched) == (0, 1)
    assert "attached to the existing person" in summary.flagged[0].reason
    persons, _ = person_finder_parse(export(database, incident))
    # the native person keeps its own record id
    assert persons[0]["person_record_id"].startswith(f"{DOMAIN}/per_")


def test_author_made_contact_only_where_a_person_reviewed_first_hand(database: Database) -> None:
    incident = new_incident(database)
    story = publish_story(database, incident)
    reviewed = {
        "maya_missing": ReviewValue.FIRST_HAND,
        "sunita": ReviewValue.NOT_RELIABLE,
        "wang": ReviewValue.FIRST_HAND,
    }
    for key, value in reviewed.items():
        review(database, story[key], value)
    # a later decision supersedes: wang's first-hand is withdrawn as not reliable
    review(database, story["wang"], ReviewValue.NOT_RELIABLE, "denied")
    with database.sessions() as s:
        claim_of = {r.id: r.claims[0].id for r in s.scalars(select(Report))}
    _, notes = person_finder_parse(export(database, incident))
    contact = {n["note_record_id"].split("/", 1)[1]: n["author_made_contact"] for n in notes}
    assert {k for k, v in contact.items() if v == "true"} == {claim_of[story["maya_missing"]]}
    # an imported author_made_contact=true is not a Trace review: written back as false
    copy = new_incident(database, "Copy")
    import_doc(database, copy, (FIXTURES / "registry-1.4.xml").read_bytes())
    _, copied = person_finder_parse(export(database, copy))
    assert {n["author_made_contact"] for n in copied} == {"false"}


def test_linked_person_record_id_comes_from_same_decisions(database: Database) -> None:
    incident = new_incident(database)
    publish(database, incident, "Maya Gurung", "missing", age=30)
    publish(database, incident, "Maya Gurung", "seen", age=70, minutes=5, location="Bus park")
    publish(database, incident, "Ram Thapa", "safe", minutes=6)
    with database.sessions() as s:
        maya_ids = sorted(s.scalars(select(Person.id).where(Person.name == "Maya Gurung")))
    assert len(maya_ids) == 2
    with database.session() as s:
        decide_link(
            s, maya_ids[0], maya_ids[1], LinkDecision.SAME, "same phone number", actor=TEST_OPERATOR
        )
    _, notes = person_finder_parse(export(database, incident))
    linked = {n["person_record_id"]: n.get("linked_person_record_id") for n in notes}
    a, b = (f"{DOMAIN}/{pid}" for pid in maya_ids)
    assert linked[a] == b and linked[b] == a
    assert [v for k, v in linked.items() if k not in (a, b)] == [None]
    # "different" supersedes "same": no link is written any more
    with database.session() as s:
        decide_link(
            s,
            maya_ids[0],
            maya_ids[1],
            LinkDecision.DIFFERENT,
            "two people after all",
            actor=TEST_OPERATOR,
        )
    _, notes = person_finder_parse(export(database, incident))
    assert not any("linked_person_record_id" in n for n in notes)
