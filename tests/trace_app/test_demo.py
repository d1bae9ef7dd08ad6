"""The seeded demo and Reset: same content, same fingerprints, nothing else kept."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from trace_app import demo_reset
from trace_app.cli import app as cli
from trace_app.demo import data, seed
from trace_app.domain import publish_report, queries, report_queries
from trace_app.domain.fingerprints import incident_fingerprint, report_content
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import Incident, InvestigationRun, Organization, Report
from trace_app.store.types import new_id


def report_fingerprints(session: Session) -> list[str]:
    from trace_app.domain.fingerprints import content_fingerprint

    reports = session.scalars(select(Report).order_by(Report.position)).all()
    return [content_fingerprint(report_content(r)) for r in reports]


def test_seed_content(database: Database, seeded: str) -> None:
    with database.sessions() as s:
        incident = s.get(Incident, seeded)
        assert incident is not None and incident.name == "Flood Relief Demo"
        orgs = {o.name: o.kind for o in s.scalars(select(Organization))}
        assert {"Central Hospital Demo", "Nepal Police Demo"} <= set(orgs)
        assert "relief camp" in orgs.values() and "community group" in orgs.values()
        summary = queries.list_incidents(s)[0]
        assert summary.people >= 20
        by_source: dict[str, list[Report]] = {}
        for report in report_queries.incident_reports(s, seeded):
            by_source.setdefault(report.organization.name, []).append(report)
        assert "Central Hospital Demo" not in by_source
        [police] = by_source["Nepal Police Demo"]
        assert police.person.name == "Maya Gurung" and police.status == "missing"
        assert (
            "in person" in police.original_text and "duty officer" in police.original_text.lower()
        )
        relays = [r for r in by_source[data.COMMUNITY] if "Nepal Police Demo" in r.original_text]
        assert len(relays) == 1 and relays[0].person_id == police.person_id
        # a missing report's alert stays open unless a later report says safe, admitted
        # or deceased ("seen" closes nothing)
        # one alert per person: a second missing report joins the open one
        alerted: set[str] = set()
        chronological = sorted(
            (r for rs in by_source.values() for r in rs), key=lambda r: r.reported_at
        )
        for i, report in enumerate(chronological):
            later = {r.status for r in chronological[i:] if r.person_id == report.person_id}
            if report.status == "missing" and not later & {"safe", "admitted", "deceased"}:
                alerted.add(report.person_id)
        assert (
            0
            < summary.open_alerts
            == len(alerted)
            < sum(1 for r in chronological if r.status == "missing")
        )


def test_reset_restores_seed_exactly(database: Database, seeded: str) -> None:
    with database.sessions() as s:
        incident = s.get(Incident, seeded)
        assert incident is not None
        first = incident_fingerprint(s, incident)
        first_reports = report_fingerprints(s)
    with database.session() as s:
        publish_report(s, seed.hospital_example_input(seeded))
    with database.sessions() as s:
        incident = s.get(Incident, seeded)
        assert incident is not None
        assert incident_fingerprint(s, incident) != first
    for _ in range(2):
        with database.session() as s:
            new = seed.reset_demo(s)
        with database.sessions() as s:
            incident = s.get(Incident, new.id)
            assert incident is not None
            assert incident_fingerprint(s, incident) == first
            assert report_fingerprints(s) == first_reports
            assert s.scalar(select(func.count()).select_from(Incident)) == 1
    assert new.id != seeded  # ids change; content does not


def test_hospital_example_is_the_only_hospital_report(database: Database, seeded: str) -> None:
    with database.session() as s:
        report = publish_report(s, seed.hospital_example_input(seeded))
        assert report.person.name == "Maya Gurung"
        assert report.status == "admitted"
        hospital = [
            r
            for r in report_queries.incident_reports(s, seeded)
            if r.source == "Central Hospital Demo"
        ]
        assert [r.id for r in hospital] == [report.id]
        assert len(report.person.claims) == 3


def test_reset_deletes_runs_then_replays_in_the_same_session(
    database: Database, seeded: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with database.session() as s:
        report_id = s.scalars(select(Report.id)).first()
        assert report_id is not None
        s.add(
            InvestigationRun(
                id=new_id("run"),
                incident_id=seeded,
                report_id=report_id,
                status="COMPLETED",
                mode="LIVE",
                model="m",
                prompt_version="p",
                run_at=datetime(2026, 9, 27, tzinfo=UTC),
                fingerprint="fp",
            )
        )
    seen: list[tuple[int, Path | None]] = []

    def replay(session: Session, path: Path | None = None) -> int:
        seen.append((session.scalar(select(func.count()).select_from(Report)) or 0, path))
        return 0

    monkeypatch.setattr(demo_reset, "recreate_replayed_runs", replay)
    recorded = tmp_path / "recorded.json"
    with database.session() as s:
        demo_reset.reset(s, _settings(tmp_path, recorded), actor=TEST_OPERATOR)
    with database.sessions() as s:
        assert s.scalar(select(func.count()).select_from(InvestigationRun)) == 0
    assert seen == [(len(data.REPORTS), recorded)]  # the replay saw the fresh seed


def test_failing_replay_rolls_the_reset_back(
    database: Database, seeded: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_session: Session, _path: Path | None = None) -> int:
        raise RuntimeError("replay failed")

    monkeypatch.setattr(demo_reset, "recreate_replayed_runs", broken)
    with pytest.raises(RuntimeError), database.session() as s:
        demo_reset.reset(s, _settings(tmp_path, None), actor=TEST_OPERATOR)
    with database.sessions() as s:
        assert s.scalars(select(Incident.id)).all() == [seeded]


def _settings(tmp_path: Path, recorded: Path | None) -> TraceSettings:
    return TraceSettings(
        home=tmp_path, database_url="sqlite:///unused.db", recorded_investigations=recorded
    )


def test_cli_reset_from_any_folder_keeps_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("TRACE_HOME", raising=False)
    ledger = tmp_path / ".trace-local" / "model-usage.json"
    ledger.parent.mkdir()
    ledger.write_text('{"requests": 3}')
    digest = hashlib.sha256(ledger.read_bytes()).hexdigest()
    runner = CliRunner()
    for _ in range(2):
        result = runner.invoke(cli, ["reset"])
        assert result.exit_code == 0, result.output
        assert "Flood Relief Demo" in result.output
    assert (tmp_path / ".trace-local" / "trace.db").is_file()
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == digest
