"""The PFIF reader and writer with no database: versions, renames, safety, limits."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from trace_app.interchange.pfif import (
    PersonOut,
    PfifEntityError,
    PfifFormatError,
    PfifSyntaxError,
    PfifTooLargeError,
    RawRecord,
    iter_pfif,
    read_pfif,
)

from .person_finder_rules import person_finder_parse

FIXTURES = Path(__file__).parent / "fixtures"


def _read(data: bytes, **kwargs: int) -> list[RawRecord]:
    return list(read_pfif(io.BytesIO(data), **kwargs))


def test_reads_a_1_4_file_with_nested_and_top_level_notes() -> None:
    records = _read((FIXTURES / "registry-1.4.xml").read_bytes())
    assert [(r.kind, r.record_id) for r in records] == [
        ("person", "registry.example.net/person.501"),
        ("note", "registry.example.net/note.9005"),
        ("person", "registry.example.net/person.502"),
        ("person", "registry.example.net/person.503"),
    ]
    lena = records[0]
    assert lena.version == "1.4"
    assert lena.fields["home_city"] == "Port Ambrose"  # padding stripped
    assert lena.fields["source_name"] == "Harbour Registry"
    assert "badge" not in lena.fields  # another namespace is ignored
    assert [n.record_id for n in lena.notes] == [
        f"registry.example.net/note.{i}" for i in (9001, 9002, 9003, 9004)
    ]
    # a nested note without person_record_id gets its person's
    assert all(n.fields["person_record_id"] == lena.record_id for n in lena.notes)
    assert all(n.nested for n in lena.notes) and not records[1].nested
    tomas = records[2]
    # first_name/last_name in a 1.4 file are read as given_name/family_name
    assert tomas.fields["given_name"] == "Tomás" and tomas.fields["family_name"] == "Quispe"
    assert records[3].fields["full_name"] == "سارا احمدی"


def test_reads_1_2_renames() -> None:
    records = _read((FIXTURES / "registry-1.2.xml").read_bytes())
    haruto = records[0]
    assert haruto.version == "1.2"
    assert haruto.fields["given_name"] == "Haruto" and haruto.fields["family_name"] == "佐藤"
    assert haruto.fields["home_postal_code"] == "980-0811"  # home_zip
    assert haruto.fields["description"].startswith("description:")  # other
    assert haruto.notes[0].fields["author_made_contact"] == "true"  # found
    for renamed in ("first_name", "last_name", "found", "other", "home_zip"):
        assert renamed not in haruto.fields and renamed not in haruto.notes[0].fields


def test_reads_1_1_namespace() -> None:
    doc = (
        b'<pfif xmlns="http://zesty.ca/pfif/1.1"><person><person_record_id>a.org/1'
        b"</person_record_id><first_name>ANA</first_name><last_name>LIMA</last_name>"
        b"<home_zip>12345</home_zip></person></pfif>"
    )
    (person,) = _read(doc)
    assert person.version == "1.1"
    assert person.fields == {
        "person_record_id": "a.org/1",
        "given_name": "ANA",
        "family_name": "LIMA",
        "home_postal_code": "12345",
    }


EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE pfif [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4"><pfif:person>
<pfif:person_record_id>a.org/1</pfif:person_record_id>
<pfif:full_name>&secret;</pfif:full_name></pfif:person></pfif:pfif>"""

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4"><pfif:person>
<pfif:full_name>&d;</pfif:full_name></pfif:person></pfif:pfif>"""


@pytest.mark.parametrize("document", [EXTERNAL, BOMB], ids=["external-entity", "expansion-bomb"])
def test_entities_are_refused(document: bytes) -> None:
    with pytest.raises(PfifEntityError) as caught:
        _read(document)
    assert caught.value.code == "pfif_entity_refused"
    assert "passwd" not in str(caught.value)


def test_a_document_over_the_limit_is_refused_while_reading() -> None:
    person = b"<pfif:person><pfif:full_name>x</pfif:full_name></pfif:person>"
    doc = b'<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4">' + person * 500 + b"</pfif:pfif>"
    assert len(_read(doc, max_bytes=len(doc))) == 500
    with pytest.raises(PfifTooLargeError, match="limit of 4,096 bytes"):
        _read(doc, max_bytes=4096)


@pytest.mark.parametrize(
    ("document", "error"),
    [
        (b"", PfifSyntaxError),
        (b"not xml at all", PfifSyntaxError),
        (b'<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4"><pfif:person>', PfifSyntaxError),
        (b"<pfif><person/></pfif>", PfifFormatError),  # no namespace
        (b'<feed xmlns="http://www.w3.org/2005/Atom"/>', PfifFormatError),
        (b'<pfif xmlns="http://zesty.ca/pfif/9.9"/>', PfifFormatError),
    ],
)
def test_unreadable_documents_get_typed_errors(document: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        _read(document)


def test_writer_output_follows_person_finder_rules_and_reads_back() -> None:
    when = datetime(2026, 7, 15, 7, 30, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    persons = [
        PersonOut(
            fields={
                "person_record_id": "trace.example.org/per_1",
                "source_date": when,
                "full_name": "सुनिता राई <&> \x01\ufffe",
                "alternate_names": "Sunita Rai\nСунита",
                "age": "30",
                "given_name": "",  # empty values are left out
            },
            notes=[
                {
                    "note_record_id": "trace.example.org/clm_1",
                    "person_record_id": "trace.example.org/per_1",
                    "author_name": "Camp & Co",
                    "source_date": when,
                    "author_made_contact": "false",
                    "status": "believed_missing",
                    "text": "line one\nline two ]]> <b>",
                }
            ],
        )
    ]
    document = b"".join(iter_pfif(persons, batch=1))
    people, notes = person_finder_parse(document)
    assert people[0]["full_name"] == "सुनिता राई <&> "  # forbidden characters removed
    assert "given_name" not in people[0]
    assert notes[0]["text"] == "line one\nline two ]]> <b>"
    (back,) = _read(document)
    assert back.fields["alternate_names"] == "Sunita Rai\nСунита"
    assert back.notes[0].fields["author_name"] == "Camp & Co"


def test_writer_streams_in_batches() -> None:
    persons = (
        PersonOut(fields={"person_record_id": f"d.org/{i}", "full_name": f"P {i}"})
        for i in range(10)
    )
    chunks = list(iter_pfif(persons, batch=3))
    assert len(chunks) == 1 + 3 + 1  # header, three full batches, the rest with the footer
    assert len(_read(b"".join(chunks))) == 10


def test_pfif_settings() -> None:
    from trace_app.settings import SettingsError, TraceSettings

    settings = TraceSettings.from_env(
        {"TRACE_PFIF_DOMAIN": "trace.example.org", "TRACE_PFIF_MAX_BYTES": "2048"},
        cwd=Path("/tmp"),
    )
    assert (settings.pfif_domain, settings.pfif_max_bytes) == ("trace.example.org", 2048)
    defaults = TraceSettings.from_env({}, cwd=Path("/tmp"))
    assert (defaults.pfif_domain, defaults.pfif_max_bytes) == ("trace.invalid", 64 * 1024 * 1024)
    for env in (
        {"TRACE_PFIF_DOMAIN": "a/b"},
        {"TRACE_PFIF_DOMAIN": "-x.org"},
        {"TRACE_PFIF_MAX_BYTES": "12"},
        {"TRACE_PFIF_MAX_BYTES": "lots"},
    ):
        with pytest.raises(SettingsError):
            TraceSettings.from_env(env, cwd=Path("/tmp"))
