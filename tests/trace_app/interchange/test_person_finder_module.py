"""Trace's PFIF against Person Finder's own code and files (issue 16), on SQLite and
PostgreSQL.

Person Finder's PFIF module (``app/pfif.py`` in github.com/google/personfinder, which
reads PFIF 1.1 to 1.4) and its PFIF test files (``tests/test.pfif-1.4.xml``,
``tests/test.pfif-1.2.xml``) may not be copied into this repository. They are read from
``PERSONFINDER_DIR``, else ``<repo>/../shared/oracles/personfinder`` (where CI has them),
else a checkout at ``<repo>/../personfinder`` (:mod:`.person_finder_oracle`). Only when
none exists do these tests skip, saying where they looked.

- An incident's export is parsed by Person Finder's own reader (``pfif.parse_file``),
  loaded from the checkout with importlib, and what it returns is checked record by
  record.
- Person Finder's test files are imported into a fresh incident; the counts expected
  are read from the file itself, and a second import adds nothing.

Person Finder's ``pfif.py`` is Python 2 (``import StringIO``, a ``ur''`` literal, a
tuple parameter, ``iteritems``). When its source does not compile as Python 3, the
loader below changes only those spellings, in memory, before running it; the reader's
logic (its SAX handler, field lists and mandatory fields) runs as written. (Checked once
by hand: Python 2.7 running the unchanged file returns the same records.)
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import io
import logging
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import select

from trace_app.domain.links import decide_link
from trace_app.domain.reviews import ReviewValue
from trace_app.store.db import Database
from trace_app.store.models import LinkDecision, Person, Report

from .conftest import (
    DOMAIN,
    counts,
    export,
    import_doc,
    new_incident,
    publish,
    publish_story,
    review,
    statuses,
)
from .person_finder_oracle import oracle_dir
from .person_finder_rules import person_finder_parse

PERSON_FINDER_TEST_FILES = ("test.pfif-1.4.xml", "test.pfif-1.2.xml")

# The Python 2 spellings in Person Finder's pfif.py and their Python 3 equivalents.
PYTHON_2_SPELLINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^import StringIO$", re.MULTILINE), "import io as StringIO"),
    (re.compile(r"\bur(?=['\"])"), "r"),
    # def check_tag(self, (ns, local), parent=None): -> unpack in the body
    (
        re.compile(r"def (\w+)\(self, \((\w+), (\w+)\)(.*?)\):\n(\s+)"),
        r"def \1(self, _\2_\3\4):\n\5\2, \3 = _\2_\3\n\5",
    ),
    (re.compile(r"\.iteritems\(\)"), ".items()"),
    (re.compile(r"\blogging\.warn\("), "logging.warning("),
)


class _PersonFinderLoader(importlib.abc.Loader):
    """Runs the checkout's pfif.py as it is, or (Python 2 source) with the spellings above
    changed in memory. Nothing is written to the checkout (no bytecode cache)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        source = self.path.read_text(encoding="utf-8")
        try:
            code = compile(source, str(self.path), "exec", dont_inherit=True)
        except SyntaxError:
            for pattern, replacement in PYTHON_2_SPELLINGS:
                source = pattern.sub(replacement, source)
            code = compile(source, str(self.path), "exec", dont_inherit=True)
        exec(code, module.__dict__)


def _person_finder_file(relative: str) -> Path:
    """A file of Person Finder's code (``person_finder_oracle.oracle_dir``: it skips, naming
    the places looked in, only when no copy is there; a copy without the file fails)."""
    path = oracle_dir() / relative
    if not path.is_file():
        pytest.fail(f"Person Finder's {relative} is missing from {path.parent}")
    return path


@pytest.fixture(scope="module")
def pfif() -> Any:
    """Person Finder's own PFIF module, loaded from the checkout (never copied here)."""
    path = _person_finder_file("app/pfif.py")
    spec = importlib.util.spec_from_loader(
        "personfinder_pfif", _PersonFinderLoader(path), origin=str(path)
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if "1.4" not in getattr(module, "PFIF_VERSIONS", {}):
        pytest.fail(f"{path} does not read PFIF 1.4: check out a newer google/personfinder")
    return module


def person_finder_reads(
    pfif: Any, document: bytes
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Persons and notes as Person Finder's reader returns them. A 1.4 document needs no
    renaming of older field names, so none is asked for: in pfif.py at commit 7173f94
    parse_file's ``rename_fields`` argument hides its ``rename_fields()`` function, so
    the renaming path raises TypeError (under Python 2 as well)."""
    persons, notes = pfif.parse_file(io.BytesIO(document), rename_fields=False)
    return persons, notes


# -- the export, read by Person Finder's reader --------------------------------------


def _incident(database: Database, incident: str) -> dict[str, str]:
    """Every claim status, non-Latin names, alternate names, ages, a first-hand review
    and a "same" decision; report ids by a short key."""
    story = {
        **publish_story(database, incident),
        "ram": publish(database, incident, "Ram Thapa", "safe", minutes=11, location="Camp 2"),
        "ram_deva": publish(database, incident, "राम थापा", "missing", minutes=12, age=45),
    }
    review(database, story["maya_missing"], ReviewValue.FIRST_HAND)
    review(database, story["sunita"], ReviewValue.NOT_RELIABLE, "the caller denied it")
    with database.sessions() as s:
        person_of = {r.id: r.person_id for r in s.scalars(select(Report))}
    with database.session() as s:
        decide_link(
            s,
            person_of[story["ram"]],
            person_of[story["ram_deva"]],
            LinkDecision.SAME,
            "the same phone number",
            actor=TEST_OPERATOR,
        )
    return story


def test_person_finder_reads_the_export(
    database: Database, pfif: Any, caplog: pytest.LogCaptureFixture
) -> None:
    incident = new_incident(database)
    story = _incident(database, incident)
    document = export(database, incident)
    with caplog.at_level(logging.WARNING):
        persons, notes = person_finder_reads(pfif, document)
    # its reader drops (with a warning) any tag it does not know where it stands
    assert [r.getMessage() for r in caplog.records if "ignored tag" in r.getMessage()] == []

    with database.sessions() as s:
        people = {p.id: p.name for p in s.scalars(select(Person))}
        reports = {r.id: r for r in s.scalars(select(Report))}
        claim_of = {rid: r.claims[0].id for rid, r in reports.items()}
        person_of = {rid: r.person_id for rid, r in reports.items()}
    record = {pid: f"{DOMAIN}/{pid}" for pid in people}

    # persons: record ids, names, alternate names, ages
    assert {p["person_record_id"]: p["full_name"] for p in persons} == {
        record[pid]: name for pid, name in people.items()
    }
    assert sorted(people.values()) == sorted(
        ["Maya Gurung", "सुनिता राई", "王小明", "عمر حداد", "Ram Thapa", "राम थापा"]
    )
    by_name = {p["full_name"]: p for p in persons}
    assert by_name["सुनिता राई"]["alternate_names"] == "Sunita Rai"
    assert (by_name["Maya Gurung"]["age"], by_name["عمر حداد"]["age"]) == ("34", "70")
    assert "age" not in by_name["王小明"]

    # notes: one per claim, with its person, status, contact, place and link
    ram, ram_deva = record[person_of[story["ram"]]], record[person_of[story["ram_deva"]]]
    expected = {
        # key: (status, author_made_contact, last_known_location, linked_person_record_id)
        "maya_missing": ("believed_missing", "true", None, None),  # reviewed first-hand
        "maya_seen": (None, "false", "Bus park", None),  # a sighting: a place, no status
        "maya_admitted": ("believed_alive", "false", "Central Hospital", None),
        "sunita": ("believed_missing", "false", None, None),  # reviewed: not reliable
        "wang": ("believed_alive", "false", "体育馆", None),
        "omar": ("believed_dead", "false", None, None),
        "ram": ("believed_alive", "false", "Camp 2", ram_deva),  # decided the same
        "ram_deva": ("believed_missing", "false", None, ram),
    }
    got = {
        n["note_record_id"]: (
            n["person_record_id"],
            n.get("status"),
            n["author_made_contact"],
            n.get("last_known_location"),
            n.get("linked_person_record_id"),
        )
        for n in notes
    }
    assert len(notes) == len(got) == len(story)
    assert got == {
        f"{DOMAIN}/{claim_of[rid]}": (record[person_of[rid]], *expected[key])
        for key, rid in story.items()
    }
    texts = {n["note_record_id"]: (n["author_name"], n["text"]) for n in notes}
    assert texts[f"{DOMAIN}/{claim_of[story['sunita']]}"] == (
        "Камчатка Relief",
        "Камчатка Relief says सुनिता राई is missing.",
    )

    # by Person Finder's own lists: known fields, mandatory fields filled, known statuses
    version = pfif.PFIF_VERSIONS["1.4"]
    for kind, records in (("person", persons), ("note", notes)):
        for item in records:
            assert set(item) <= set(version.fields[kind]), (kind, item)
            assert all(item.get(f, "").strip() for f in version.mandatory_fields[kind]), item
    assert {n.get("status", "") for n in notes} <= set(pfif.NOTE_STATUS_VALUES)
    # and the repository's own statement of its rules reads the same records
    assert person_finder_parse(document) == (persons, notes)


# -- Person Finder's test files, imported -------------------------------------------

# PFIF note status -> Trace claim (docs/interchange.md, "The status table")
READ_BACK = {
    "believed_missing": "missing",
    "information_sought": "missing",
    "believed_alive": "safe",
    "is_note_author": "safe",
    "believed_dead": "deceased",
}


def _field(element: ET.Element, ns: str, *names: str) -> str:
    for name in names:
        child = element.find(f"{{{ns}}}{name}")
        if child is not None and (child.text or "").strip():
            return (child.text or "").strip()
    return ""


def _name(person: ET.Element, ns: str) -> str:
    """The name Trace gives a person record: full_name's first line, else the given
    (first) and family (last) names."""
    full = _field(person, ns, "full_name")
    if full:
        return full.splitlines()[0].strip()
    given = _field(person, ns, "given_name", "first_name")
    return " ".join(filter(None, (given, _field(person, ns, "family_name", "last_name"))))


def _expected_from_file(path: Path) -> dict[str, Any]:
    """What importing the file should do, read from the file itself."""
    root = ET.parse(path).getroot()
    ns = root.tag[1:].split("}", 1)[0]
    assert root.tag == f"{{{ns}}}pfif" and ns.startswith("http://zesty.ca/pfif/1.")
    persons = root.findall(f"{{{ns}}}person")
    notes = root.findall(f".//{{{ns}}}note")
    assert persons and notes, f"{path} holds no person or no note"
    name_of = {_field(p, ns, "person_record_id"): _name(p, ns) for p in persons}
    owner = {n: _field(p, ns, "person_record_id") for p in persons for n in p}
    claims: dict[str, list[tuple[str, str]]] = {}  # name -> [(source_date, Trace status)]
    note_ids: set[str] = set()
    comments: set[str] = set()
    for note in notes:
        note_id = _field(note, ns, "note_record_id")
        person_id = owner.get(note) or _field(note, ns, "person_record_id")
        status = _field(note, ns, "status")
        contact = _field(note, ns, "author_made_contact", "found") == "true"
        if status:
            claim = READ_BACK[status]
        elif _field(note, ns, "last_known_location") or contact:
            claim = "seen"
        else:
            comments.add(note_id)  # a comment: Trace keeps claims only
            continue
        note_ids.add(note_id)
        claims.setdefault(name_of[person_id], []).append((_field(note, ns, "source_date"), claim))
    return {
        "person_ids": set(name_of),
        "note_ids": note_ids,
        "comments": comments,
        "linked": {
            _field(n, ns, "note_record_id")
            for n in notes
            if _field(n, ns, "linked_person_record_id")
        },
        "statuses": {name: [c for _date, c in sorted(found)] for name, found in claims.items()},
    }


@pytest.mark.parametrize("name", PERSON_FINDER_TEST_FILES)
def test_person_finder_test_file_imports_once(database: Database, pfif: Any, name: str) -> None:
    path = _person_finder_file(f"tests/{name}")
    expected = _expected_from_file(path)
    incident = new_incident(database, f"Person Finder {name}")
    summary = import_doc(database, incident, path.read_bytes())
    assert summary.invalid == [] and summary.invalid_count == 0
    assert (summary.people_added, summary.people_matched, summary.notes_added) == (
        len(expected["person_ids"]),
        0,
        len(expected["note_ids"]),
    )
    assert {s.record_id for s in summary.skipped} == expected["comments"]
    linked = {f.record_id for f in summary.flagged if "not decided here" in f.reason}
    assert linked == expected["linked"]
    assert statuses(database, incident) == expected["statuses"]
    before = counts(database, incident)
    assert before[:2] == (len(expected["person_ids"]), len(expected["note_ids"]))

    # the same file again adds nothing, and says why for every record
    again = import_doc(database, incident, path.read_bytes())
    assert (again.people_added, again.people_matched, again.notes_added) == (0, 0, 0)
    assert again.invalid_count == 0
    assert {s.record_id for s in again.skipped} == (
        expected["person_ids"] | expected["note_ids"] | expected["comments"]
    )
    assert {s.reason for s in again.skipped if s.record_id not in expected["comments"]} == {
        "already imported into this incident"
    }
    assert counts(database, incident) == before

    # exported again, Person Finder's reader finds the file's own record ids
    persons, notes = person_finder_reads(pfif, export(database, incident))
    assert {p["person_record_id"] for p in persons} == expected["person_ids"]
    assert {n["note_record_id"] for n in notes} == expected["note_ids"]
