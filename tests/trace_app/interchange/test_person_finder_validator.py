"""Trace's PFIF 1.3 export against Person Finder's own validator (issue 23), which reads
PFIF 1.1 to 1.3: the demo-like story with every status, other scripts, a "same" link and
a first-hand review, and 1,000 persons with 3,000 notes, give 0 messages. (The validator
takes minutes on 10,000 persons: ``bench/bench_pfif_validator.py`` checks that size.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from accounts_helpers import TEST_OPERATOR
from sqlalchemy import insert

from trace_app.domain.links import decide_link_and_commit
from trace_app.domain.pfif_export import iter_incident_pfif
from trace_app.domain.reviews import ReviewValue
from trace_app.store.db import Database
from trace_app.store.models import (
    Claim,
    ClaimStatus,
    LinkDecision,
    Organization,
    Person,
    Report,
)
from trace_app.store.types import new_id

from .conftest import DOMAIN, new_incident, publish, publish_story, review
from .person_finder_oracle import oracle_dir, validate


def _export(database: Database, incident_id: str, version: str) -> bytes:
    with database.sessions() as s:
        return b"".join(iter_incident_pfif(s, incident_id, domain=DOMAIN, version=version))


def test_the_validator_finds_what_is_wrong() -> None:
    bad = (oracle_dir() / "tests" / "test.pfif-1.2-badrecord.xml").read_bytes()
    errors = [m for m in validate(bad) if m.is_error]
    assert len(errors) >= 10  # so a 0 below means something


def test_a_pfif_1_3_export_passes_person_finders_validator(database: Database) -> None:
    incident = new_incident(database)
    story = publish_story(database, incident)
    review(database, story["maya_admitted"], ReviewValue.FIRST_HAND)
    other = publish(database, incident, "Sunitaa Rai", "safe", minutes=30, age=31)
    with database.sessions() as s:
        sunita = s.get(Report, story["sunita"])
        found = s.get(Report, other)
        assert sunita is not None and found is not None
        pair = (sunita.person_id, found.person_id)
        s.rollback()  # only reads so far: the decision opens its own write transaction
        decide_link_and_commit(s, *pair, LinkDecision.SAME, "same", actor=TEST_OPERATOR)
    document = _export(database, incident, "1.3")
    assert b'xmlns:pfif="http://zesty.ca/pfif/1.3"' in document
    assert b"<pfif:found>true</pfif:found>" in document  # the first-hand review
    assert b"<pfif:linked_person_record_id>" in document
    assert b"Also known as: Sunita Rai" in document  # 1.3 has no alternate_names field
    for tag in (b"given_name", b"description", b"author_made_contact", b"alternate_names"):
        assert b"<pfif:" + tag + b">" not in document
    messages = validate(document)
    assert [(m.category, m.xml_tag, m.xml_text) for m in messages] == []


def fill(database: Database, incident_id: str, persons: int, notes_each: int) -> None:
    """Persons and claims shaped like what publishing writes (Core inserts, for speed)."""
    start = datetime(2026, 7, 14, 6, 0, tzinfo=UTC)
    statuses = [s.value for s in ClaimStatus]
    with database.session() as s:
        orgs = [
            {"id": new_id("org"), "name": f"Relief Team {i}", "name_key": f"relief team {i}"}
            for i in range(10)
        ]
        s.execute(insert(Organization), orgs)
        people = [
            {
                "id": new_id("per"),
                "incident_id": incident_id,
                "name": f"Person {i:05d} Tamang",
                "name_key": f"person {i:05d} tamang",
                "age": None if i % 7 == 0 else i % 90,
            }
            for i in range(persons)
        ]
        s.execute(insert(Person), people)
        reports, claims = [], []
        for i in range(persons * notes_each):
            person = people[i % persons]
            status = statuses[i % len(statuses)]
            when = start + timedelta(seconds=i)
            report_id = new_id("rep")
            reports.append(
                {
                    "id": report_id,
                    "incident_id": incident_id,
                    "organization_id": orgs[i % len(orgs)]["id"],
                    "person_id": person["id"],
                    "summary": f"{person['name']}: {status}",
                    "original_text": f"Field note {i}: {person['name']} is {status} & well <ok>.",
                    "reported_at": when,
                    "references": [],
                    "person_name": person["name"],
                    "person_age": person["age"],
                    "status": status,
                    "location": f"Ward {i % 31}",
                    "published_at": when,
                    "position": i + 1,
                }
            )
            claims.append(
                {
                    "id": new_id("clm"),
                    "incident_id": incident_id,
                    "person_id": person["id"],
                    "report_id": report_id,
                    "status": status,
                    "location": f"Ward {i % 31}",
                    "position": i + 1,
                }
            )
        s.execute(insert(Report), reports)
        s.execute(insert(Claim), claims)


def test_a_thousand_persons_pass_person_finders_validator(tmp_path: object) -> None:
    from trace_app.store.db import make_engine, migrate

    oracle_dir()  # skip early, with the places looked in, when the oracle is absent
    database = Database(make_engine(f"sqlite:///{tmp_path}/big.db"))
    migrate(database.engine)
    incident = new_incident(database, "Big Flood")
    fill(database, incident, persons=1_000, notes_each=3)
    document = _export(database, incident, "1.3")
    assert document.count(b"<pfif:person>") == 1_000
    assert document.count(b"<pfif:note>") == 3_000
    messages = validate(document)
    assert [(m.category, m.xml_tag, m.xml_text) for m in messages[:5]] == []
    database.dispose()
