"""Dates at extreme offsets in PFIF and shelter lists (issue 38, hole 4): each is an
invalid record with one clear reason, through the mapping, the CSV reader, the import
on a database, ``trace pfif import``, ``trace import csv`` and the API's dry run. Before,
``0001-01-01T00:00:00+14:00`` raised OverflowError: HTTP 500 and a traceback."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_app.cli import app as trace_cli
from trace_app.domain.pfif_import import ImportRefusedError
from trace_app.interchange.pfif import RawRecord
from trace_app.interchange.pfif_mapping import InvalidRecord, note_record, person_record
from trace_app.interchange.shelter_csv import read_shelter_csv
from trace_app.store.db import Database

from .conftest import counts, import_csv, import_doc, new_incident

EARLY = "0001-01-01T00:00:00+14:00"
LATE = "9999-12-31T23:59:59-14:00"
REASON = "is outside the dates Trace can store (the years 2 to 9998, in UTC)"
XML = {"content-type": "application/xml"}


def pfif(person_date: str, note_date: str) -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<pfif:pfif xmlns:pfif="http://zesty.ca/pfif/1.4">
  <pfif:person>
    <pfif:person_record_id>example.org/p1</pfif:person_record_id>
    <pfif:full_name>Maya Gurung</pfif:full_name>
    <pfif:source_date>{person_date}</pfif:source_date>
    <pfif:note>
      <pfif:note_record_id>example.org/n1</pfif:note_record_id>
      <pfif:author_name>River Clinic</pfif:author_name>
      <pfif:source_date>{note_date}</pfif:source_date>
      <pfif:status>believed_missing</pfif:status>
      <pfif:text>Missing since the flood.</pfif:text>
    </pfif:note>
  </pfif:person>
</pfif:pfif>
""".encode()


CSV = f"full_name,source_date\nMaya Gurung,{EARLY}\nRam Thapa,{LATE}\nAsha Rai,\n"


@pytest.mark.parametrize("when", [EARLY, LATE])
@pytest.mark.parametrize("field", ["source_date", "entry_date"])
def test_a_person_record_names_the_date_it_refuses(when: str, field: str) -> None:
    fields = {"person_record_id": "a.org/p1", "full_name": "A", field: when}
    raw = RawRecord("person", fields, "1.4", 1)
    record = person_record(raw)
    assert isinstance(record, InvalidRecord)
    assert record.reasons == (f"{field} {when!r} {REASON}",)


@pytest.mark.parametrize("when", [EARLY, LATE])
def test_a_note_record_names_the_date_it_refuses(when: str) -> None:
    fields = {"note_record_id": "a.org/n1", "person_record_id": "a.org/p1", "source_date": when}
    record = note_record(RawRecord("note", fields, "1.4", 2))
    assert isinstance(record, InvalidRecord)
    assert record.reasons == (f"source_date {when!r} {REASON}",)


def test_shelter_rows_keep_the_date_for_the_one_check() -> None:
    rows = read_shelter_csv(
        io.BytesIO(CSV.encode()), source_name="Camp 2", domain="x.org", max_bytes=10_000
    )
    notes = [note_record(record.notes[0]) for record, _problems in rows.records]
    assert [n.reasons if isinstance(n, InvalidRecord) else () for n in notes] == [
        (f"source_date {EARLY!r} {REASON}",),
        (f"source_date {LATE!r} {REASON}",),
        (),
    ]


def test_the_import_refuses_them_and_keeps_nothing(database: Database) -> None:
    incident = new_incident(database)
    with pytest.raises(ImportRefusedError) as refused:
        import_doc(database, incident, pfif("2026-07-14T06:00:00Z", LATE))
    [invalid] = refused.value.summary.invalid
    assert invalid.record_id == "example.org/n1"
    assert invalid.reasons == (f"source_date {LATE!r} {REASON}",)
    with pytest.raises(ImportRefusedError) as refused_csv:
        import_csv(database, incident, CSV)
    assert [r.index for r in refused_csv.value.summary.invalid] == [2, 3]
    assert counts(database, incident) == (0, 0, 0)
    kept = import_csv(database, incident, CSV, skip=True)
    assert (kept.people_added, kept.notes_added, kept.invalid_count) == (1, 1, 2)


@pytest.fixture
def cli_incident(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert CliRunner().invoke(trace_cli, ["incident", "create", "Quake"]).exit_code == 0
    return "Quake"


@pytest.mark.parametrize("dry_run", [False, True])
def test_trace_pfif_import_says_why_in_one_line_without_a_traceback(
    cli_incident: str, tmp_path: Path, dry_run: bool
) -> None:
    document = tmp_path / "extreme.xml"
    document.write_bytes(pfif(EARLY, LATE))
    args = ["pfif", "import", str(document), "--incident", cli_incident]
    result = CliRunner().invoke(trace_cli, [*args, "--dry-run"] if dry_run else args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and "OverflowError" not in result.output
    assert f"invalid person example.org/p1: source_date {EARLY!r} {REASON}" in result.output


def test_trace_import_csv_says_why_by_line_without_a_traceback(
    cli_incident: str, tmp_path: Path
) -> None:
    shelter = tmp_path / "camp.csv"
    shelter.write_text(CSV, encoding="utf-8")
    args = ["import", "csv", str(shelter), "--incident", cli_incident, "--source", "Camp 2"]
    result = CliRunner().invoke(trace_cli, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"line 2: source_date {EARLY!r} {REASON}" in result.output
    assert f"line 3: source_date {LATE!r} {REASON}" in result.output
    assert "Traceback" not in result.output


def test_the_api_dry_run_answers_422_not_500(web: Any, incident_id: str) -> None:
    url = f"/api/incidents/{incident_id}/pfif"
    for person_date, note_date in ((EARLY, "2026-07-14T06:00:00Z"), ("2026-07-14T06:00:00Z", LATE)):
        response = web.post(
            url, params={"dry_run": "true"}, content=pfif(person_date, note_date), headers=XML
        )
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "invalid_records"
        reasons = [r for i in response.json()["summary"]["invalid"] for r in i["reasons"]]
        assert any(REASON in reason for reason in reasons), reasons
