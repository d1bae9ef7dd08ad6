"""A dry run is the real import rolled back, so its counts are what the import does; the
web's confirm refuses when the incident changed since the preview; and the command line
says what *would* have happened after a dry run or a refused file, never "notes added"
followed by "Nothing was imported" (issue 23, item 4). SQLite and PostgreSQL."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select
from typer.testing import CliRunner

from trace_app.cli import app as trace_cli
from trace_app.domain import import_runs
from trace_app.domain.import_runs import ImportChangedError, ImportKind, ImportRequest
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database

from .conftest import DOMAIN, FIXTURES, counts, new_incident, publish

# A shelter list written for these tests: two good rows, one without a name (line 3).
LIST = "full_name,age,last_known_location\nMina Sherpa,41,Camp 4\n,9,Camp 4\nTenzin Lama,7,Camp 4\n"


def audit_rows(database: Database) -> int:
    with database.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(AuditEvent)) or 0)


def dry(database: Database, request: ImportRequest, data: bytes) -> import_runs.ImportOutcome:
    with database.sessions() as s:
        return import_runs.dry_run(
            s, request, io.BytesIO(data), domain=DOMAIN, max_bytes=1 << 20, actor=TEST_OPERATOR
        )


def confirm(
    database: Database, request: ImportRequest, data: bytes, expected: import_runs.Counts
) -> import_runs.ImportOutcome:
    with database.sessions() as s:
        return import_runs.confirm_import(
            s,
            request,
            io.BytesIO(data),
            expected,
            domain=DOMAIN,
            max_bytes=1 << 20,
            actor=TEST_OPERATOR,
        )


@pytest.mark.parametrize("kind", list(ImportKind))
def test_a_dry_run_keeps_nothing_and_counts_what_the_import_does(
    database: Database, kind: ImportKind
) -> None:
    incident = new_incident(database)
    publish(database, incident, "Mina Sherpa", "missing", age=41)
    if kind is ImportKind.PFIF:
        data = (FIXTURES / "registry-1.4.xml").read_bytes()
        request = ImportRequest(kind, incident)
    else:
        data = LIST.encode()
        request = ImportRequest(kind, incident, source_name="Camp 4 Desk", skip_invalid=True)
    before = (counts(database, incident), audit_rows(database))
    preview = dry(database, request, data)
    assert not preview.saved and preview.summary.notes_added > 0
    assert (counts(database, incident), audit_rows(database)) == before
    assert dry(database, request, data).summary.people_added == preview.summary.people_added

    done = confirm(database, request, data, import_runs.counts(preview.summary))
    assert done.saved
    assert import_runs.counts(done.summary) == import_runs.counts(preview.summary)
    assert counts(database, incident) != before[0]
    assert audit_rows(database) == before[1] + 1  # the import's one row


def test_a_refused_file_previews_its_problems_by_line(database: Database) -> None:
    incident = new_incident(database)
    request = ImportRequest(ImportKind.CSV, incident, source_name="Camp 4 Desk")
    preview = dry(database, request, LIST.encode())
    assert preview.refused.startswith("Nothing was imported: 1 row is not valid")
    assert [r.index for r in preview.summary.invalid] == [3]
    assert (preview.summary.people_added, preview.summary.notes_added) == (2, 2)


def test_confirm_refuses_when_the_incident_changed(database: Database) -> None:
    incident = new_incident(database)
    request = ImportRequest(ImportKind.CSV, incident, source_name="Camp 4 Desk", skip_invalid=True)
    preview = dry(database, request, LIST.encode())
    # someone imports the same list in between: the confirm would now add nothing
    confirm(database, request, LIST.encode(), import_runs.counts(preview.summary))
    before = (counts(database, incident), audit_rows(database))
    with pytest.raises(ImportChangedError) as changed:
        confirm(database, request, LIST.encode(), import_runs.counts(preview.summary))
    assert changed.value.outcome.summary.people_added == 0
    assert changed.value.outcome.summary.notes_added == 0
    assert changed.value.outcome.summary.skipped_count == 4  # two people, two notes
    assert (counts(database, incident), audit_rows(database)) == before


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return tmp_path


def test_the_cli_says_what_would_have_happened(cli_env: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(trace_cli, ["incident", "create", "Quake"]).exit_code == 0
    listing = runner.invoke(trace_cli, ["incident", "list"]).output
    incident = next(line.split("\t")[0] for line in listing.splitlines() if "\tQuake" in line)
    shelter = cli_env / "camp.csv"
    shelter.write_text(LIST, encoding="utf-8")
    args = ["import", "csv", str(shelter), "--incident", incident, "--source", "Camp 4"]

    refused = runner.invoke(trace_cli, args)
    assert refused.exit_code == 1
    assert "notes added" not in refused.output  # nothing was added: it must not say so
    assert "would have added 2 people" in refused.output and "2 notes" in refused.output
    assert "line 3: " in refused.output and "Nothing was imported" in refused.output

    trial = runner.invoke(trace_cli, [*args, "--skip-invalid", "--dry-run"])
    assert trial.exit_code == 0, trial.output
    assert "notes added" not in trial.output and "would have added 2 people" in trial.output
    assert "Dry run: nothing was saved" in trial.output

    done = runner.invoke(trace_cli, [*args, "--skip-invalid"])
    assert done.exit_code == 0, done.output
    assert "people added: 2" in done.output and "notes added: 2" in done.output
    assert "would" not in done.output

    again = runner.invoke(trace_cli, [*args, "--skip-invalid", "--dry-run"])
    assert "would have added 0 people" in again.output  # the dry run saw the real import
