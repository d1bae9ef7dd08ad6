"""REPLAYED runs: recorded from a (scripted) run by record-demo, re-created at reset only
where the recorded content fingerprint still matches, shown without a call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from modelgate.ledger import JsonFileLedger, Ledger
from modelgate.providers import Provider, ProviderConfig, ScriptedProvider
from trace_app import demo_reset
from trace_app.demo.data import POLICE
from trace_app.investigation.demo_recording import (
    REVIEWER_TASK_ENTRY,
    RecordingFailed,
    record_demo,
)
from trace_app.investigation.model_settings import NEMOTRON_MODEL, ModelSettings
from trace_app.investigation.recorded import (
    load_recorded,
    recreate_replayed_runs,
)
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import InvestigationRun, Report

from .conftest import (
    PASSPHRASE,
    Harness,
    community_relay_id,
    police_report_id,
    report_id_for,
    run_count,
    saved_runs,
)

POLICE_ANSWER = {"attribution": "RELAY", "referenced_source": "NONE"}
RELAY_ANSWERS = ({"attribution": "RELAY", "referenced_source": POLICE}, {"support": "SUPPORTS"})
# the camp entry the reviewer's task opens (Sunita Bhandari)
CAMP_ANSWER = {"attribution": "RELAY", "referenced_source": "NONE"}
ANSWERS = [POLICE_ANSWER, *RELAY_ANSWERS, CAMP_ANSWER]


async def record(tmp_path: Path, provider: ScriptedProvider, ledger_path: Path) -> Path:
    output = tmp_path / "recorded" / "recorded_investigations.json"

    def factory(config: ProviderConfig) -> Provider:
        return provider

    def ledger() -> Ledger:
        return JsonFileLedger(ledger_path, cap=200)

    await record_demo(
        model=ModelSettings.from_env(),
        passphrase=PASSPHRASE,
        output=output,
        ledger_factory=ledger,
        provider_factory=factory,
    )
    return output


def reset_demo(session: Session, recorded: Path | None) -> None:
    """The app's Reset demo, replaying ``recorded`` (None: the shipped file)."""
    settings = TraceSettings(
        home=Path("unused"), database_url="sqlite://", recorded_investigations=recorded
    )
    demo_reset.reset(session, settings, actor=TEST_OPERATOR)


@pytest.fixture
async def recorded_file(tmp_path: Path, ledger_path: Path) -> Path:
    provider = ScriptedProvider(ANSWERS, model=NEMOTRON_MODEL)
    return await record(tmp_path, provider, ledger_path)


async def test_record_demo_records_the_seeded_runs_from_a_run(
    recorded_file: Path, ledger_path: Path, db: Database
) -> None:
    runs = load_recorded(recorded_file)
    assert [(r.status, r.attribution, r.referenced_source, r.support) for r in runs] == [
        (Status.NEEDS_REVIEW, "RELAY", "NONE", None),
        (Status.NEEDS_REVIEW, "RELAY", POLICE, "SUPPORTS"),
        (Status.NEEDS_REVIEW, "RELAY", "NONE", None),
    ]
    assert [len(r.exchanges) for r in runs] == [1, 2, 1]
    assert "Sunita Bhandari" in runs[2].citations[0].excerpt
    assert all(e["outcome"] == "ok" for r in runs for e in r.exchanges)
    assert JsonFileLedger(ledger_path).snapshot().requests == 4  # recording is counted
    # the user's database got no live run (its reset after recording replays them)
    assert {r.mode for r in saved_runs(db)} <= {"REPLAYED"}
    assert PASSPHRASE not in recorded_file.read_text()


async def test_reset_recreates_replayed_runs_shown_without_a_call(
    recorded_file: Path, harness: Harness
) -> None:
    with harness.db.session() as session:
        reset_demo(session, recorded_file)

    runs = saved_runs(harness.db)
    assert sorted(r.mode for r in runs) == ["REPLAYED"] * 3

    result = await harness.service.investigate(community_relay_id(harness.db), None)
    assert (result.status, result.mode, result.support) == (
        Status.NEEDS_REVIEW,
        Mode.REPLAYED,
        "SUPPORTS",
    )
    assert [c.source for c in result.citations] == ["Bhote Koshi Youth Network Demo", POLICE]
    police = await harness.service.investigate(police_report_id(harness.db), None)
    assert police.mode is Mode.REPLAYED
    assert harness.provider.requests == []
    assert harness.requests_counted() == 4  # only the four recording calls, none since
    saved = harness.service.saved_result(police_report_id(harness.db))
    assert saved is not None and saved.mode is Mode.REPLAYED

    with harness.db.session() as session:
        reset_demo(session, recorded_file)
    assert run_count(harness.db) == 3  # re-created, not doubled


async def test_no_replay_where_the_content_no_longer_matches(
    recorded_file: Path, harness: Harness
) -> None:
    with harness.db.session() as session:
        reset_demo(session, recorded_file)
    assert run_count(harness.db) == 3
    with harness.db.session() as session:
        session.execute(delete(InvestigationRun))
    with harness.db.session() as session:
        police = session.scalar(select(Report).where(Report.id == police_report_id(harness.db)))
        assert police is not None
        police.original_text = police.original_text.replace("24", "25")
    with harness.db.session() as session:
        added = recreate_replayed_runs(session, recorded_file)
    # the police report changed; the relay's fingerprint covers the police report too;
    # only the camp entry, untouched, is replayed
    assert added == 1 and run_count(harness.db) == 1
    camp_entry = report_id_for(harness.db, REVIEWER_TASK_ENTRY.source, REVIEWER_TASK_ENTRY.text)
    assert [r.report_id for r in saved_runs(harness.db)] == [camp_entry]


async def test_a_recording_for_another_fingerprint_is_not_replayed(
    recorded_file: Path, harness: Harness
) -> None:
    data = json.loads(recorded_file.read_text())
    data["runs"][0]["fingerprint"] = data["runs"][0]["fingerprint"][:-4] + "0000"
    recorded_file.write_text(json.dumps(data))
    with harness.db.session() as session:
        reset_demo(session, recorded_file)
    replayed = {r.report_id for r in saved_runs(harness.db)}
    assert community_relay_id(harness.db) in replayed and len(replayed) == 2
    assert police_report_id(harness.db) not in replayed


async def test_an_invalid_recording_file_does_not_break_reset(
    tmp_path: Path, harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with harness.db.session() as session:
        reset_demo(session, bad)
    assert run_count(harness.db) == 0
    assert police_report_id(harness.db)


async def test_a_failed_recording_leaves_the_previous_file(
    recorded_file: Path, tmp_path: Path, ledger_path: Path
) -> None:
    before = recorded_file.read_bytes()
    provider = ScriptedProvider(
        [POLICE_ANSWER, {"attribution": "MAYBE"}, CAMP_ANSWER], model=NEMOTRON_MODEL
    )
    with pytest.raises(RecordingFailed):
        await record(tmp_path, provider, ledger_path)
    assert recorded_file.read_bytes() == before


async def test_recording_needs_the_passphrase(
    tmp_path: Path, ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACE_LIVE_PASSPHRASE")
    provider = ScriptedProvider(ANSWERS, model=NEMOTRON_MODEL)
    with pytest.raises(RecordingFailed):
        await record(tmp_path, provider, ledger_path)
    assert provider.requests == [] and not ledger_path.exists()


def test_the_shipped_recordings_are_valid_and_match_the_seed(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committed file came from ``trace record-demo``; if the seed or prompt version
    changes, this fails until the runs are recorded again."""
    monkeypatch.delenv("TRACE_RECORDED_INVESTIGATIONS")
    runs = load_recorded()
    if not runs:
        pytest.skip("no recorded_investigations.json shipped yet")
    assert all(r.exchanges for r in runs)
    with db.session() as session:
        reset_demo(session, None)
    replayed = saved_runs(db)
    assert len(replayed) == len(runs)
    assert {r.mode for r in replayed} == {"REPLAYED"}


def test_the_shipped_recordings_were_made_with_todays_prompt_bytes(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prompt version keeps its name only while the messages sent for the
    recorded reports are byte for byte what was recorded (docs/decisions/0035)."""
    from trace_app.investigation.answers import attribution_result_type
    from trace_app.investigation.requests import attribution_request, support_request
    from trace_app.investigation.service import InvestigationService, Prepared

    monkeypatch.delenv("TRACE_RECORDED_INVESTIGATIONS")
    runs = load_recorded()
    if not runs:
        pytest.skip("no recorded_investigations.json shipped yet")
    service = InvestigationService(
        db,
        model=ModelSettings.from_env({"TRACE_MODEL": runs[0].model}),
        ledger_factory=lambda: JsonFileLedger(Path("/nonexistent/never-used.json")),
    )
    by_text = {r.citations[0].excerpt: r for r in runs}
    for report_id in (police_report_id(db), community_relay_id(db)):
        prepared = service.prepare(report_id)
        assert isinstance(prepared, Prepared)
        run = by_text[prepared.chosen.text]
        assert run.fingerprint == prepared.fingerprint
        built = [
            attribution_request(
                prepared.chosen, prepared.menu, attribution_result_type(prepared.menu.names)
            )
        ]
        if run.support is not None:
            referenced = next(r for r in prepared.reports if r.source == run.referenced_source)
            built.append(support_request(prepared.chosen, referenced))
        sent = [e["request"]["messages"] for e in run.exchanges]
        assert sent == [
            [{"content": m.content, "role": m.role} for m in request.messages] for request in built
        ]


async def test_a_replayed_row_holds_what_was_recorded(
    recorded_file: Path, harness: Harness
) -> None:
    """The REPLAYED row goes through the one row builder (evidence_store.run_from_result)."""
    with harness.db.session() as session:
        reset_demo(session, recorded_file)
    by_fingerprint = {r.fingerprint: r for r in load_recorded(recorded_file)}
    camp_entry = report_id_for(harness.db, REVIEWER_TASK_ENTRY.source, REVIEWER_TASK_ENTRY.text)
    rows = saved_runs(harness.db)
    assert len(rows) == 3
    for row in rows:
        run = by_fingerprint[row.fingerprint]
        assert (row.mode, row.status, row.model, row.prompt_version) == (
            "REPLAYED",
            run.status.value,
            run.model,
            run.prompt_version,
        )
        assert (row.attribution, row.referenced_source, row.support, row.reason) == (
            run.attribution,
            run.referenced_source,
            run.support,
            run.reason,
        )
        assert row.run_at.replace(tzinfo=None) == run.run_at.replace(tzinfo=None)
        assert (row.prompt_tokens, row.completion_tokens, row.estimated_tokens) == (
            run.usage.prompt_tokens,
            run.usage.completion_tokens,
            run.usage.estimated_tokens,
        )
        assert [(c["role"], c["source"], c["excerpt"]) for c in row.citations] == [
            (c.role, c.source, c.excerpt) for c in run.citations
        ]
        assert all(c["report_id"] for c in row.citations)  # every cited report was found
        assert row.citations[0]["report_id"] == row.report_id
        # the police report and the relay hold attribution cues; the camp entry none
        assert row.rules_version is None
        assert bool(row.evidence) is (row.report_id != camp_entry)
