"""The spec's "What is tested" list, offline: the scripted provider goes through the real
gateway, a temporary JSON ledger, and the real store."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from sqlalchemy import select

from modelgate.errors import (
    BudgetExhausted,
    LedgerBusy,
    LedgerUnavailable,
    NotConfigured,
    TransportError,
)
from modelgate.providers import ScriptedProvider, ScriptedReply
from modelgate.types import Usage
from trace_app.demo.data import COMMUNITY_RELAY, HOSPITAL, POLICE
from trace_app.demo.seed import reset_demo
from trace_app.investigation.model_settings import (
    CALL_TIMEOUT_S,
    MAX_OUTPUT_TOKENS,
    NEMOTRON_MODEL,
    PROMPT_VERSION,
    ModelSettings,
)
from trace_app.investigation.outcome import status_for_error
from trace_app.investigation.service import Prepared
from trace_app.investigation.vocabulary import Mode, Refusal, Status
from trace_app.store.db import Database
from trace_app.store.models import InvestigationRun

from .conftest import (
    KEY,
    PASSPHRASE,
    Harness,
    community_relay_id,
    make_service,
    police_report_id,
    publish,
    publish_hospital_example,
    run_count,
    saved_runs,
    snapshot_people_claims_alerts,
)

CAMP = "Tatopani Relief Camp Demo"
DIRECT_TEXT = "I met Maya Gurung, 24, at the camp gate and wrote down her name myself."
DIRECT = {"attribution": "DIRECT", "referenced_source": "NONE"}


def direct_report(h: Harness) -> str:
    return publish(h.db, CAMP, DIRECT_TEXT)


# --- no passphrase, wrong passphrase, no key: no call, no ledger ------------------------


@pytest.mark.parametrize("typed", [None, "", "wrong passphrase", PASSPHRASE + " "])
async def test_missing_or_wrong_passphrase_makes_no_call_and_writes_no_ledger(
    harness: Harness, typed: str | None
) -> None:
    report_id = direct_report(harness)
    harness.provider.add(DIRECT)

    result = await harness.service.investigate(report_id, typed)

    assert result.status is Status.UNAVAILABLE and result.mode is None
    assert result.refusal is Refusal.PASSPHRASE and "passphrase" in result.next_step
    assert harness.provider.requests == [] and harness.built == []
    assert not harness.ledger_path.exists()
    assert run_count(harness.db) == 0


async def test_unset_passphrase_turns_live_checks_off(
    db: Database, ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACE_LIVE_PASSPHRASE")
    provider = ScriptedProvider([DIRECT], model=NEMOTRON_MODEL)
    service = make_service(db, ledger_path, provider)
    report_id = publish(db, CAMP, DIRECT_TEXT)

    result = await service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.UNAVAILABLE
    assert "switched off" in result.reason
    assert provider.requests == [] and not ledger_path.exists()
    # the card's next step is the one that applies: nothing about a passphrase to check
    assert result.refusal is Refusal.SWITCHED_OFF
    assert "live checks are off" in result.next_step and "passphrase" not in result.next_step


async def test_missing_key_makes_no_call_and_writes_no_ledger(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NVIDIA_NIM_API_KEY")
    report_id = direct_report(harness)
    harness.provider.add(DIRECT)

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.UNAVAILABLE
    assert result.refusal is Refusal.NOT_CONFIGURED and "operator" in result.next_step
    assert harness.provider.requests == [] and not harness.ledger_path.exists()


async def test_missing_client_library_is_unavailable(harness: Harness) -> None:
    def no_client(_config: object) -> ScriptedProvider:
        raise NotConfigured("litellm is not installed")

    harness.service.provider_factory = no_client
    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)
    assert result.status is Status.UNAVAILABLE
    assert not harness.ledger_path.exists()


# --- the ledger ---------------------------------------------------------------------


async def test_ledger_reserves_before_the_call(harness: Harness) -> None:
    seen_during_call: list[int] = []

    class Watching(ScriptedProvider):
        async def complete(self, request):  # type: ignore[no-untyped-def]
            seen_during_call.append(harness.ledger().snapshot().requests)
            return await super().complete(request)

    watcher = Watching([DIRECT], model=NEMOTRON_MODEL)
    service = make_service(harness.db, harness.ledger_path, watcher)

    await service.investigate(direct_report(harness), PASSPHRASE)

    assert seen_during_call == [1]


async def test_failed_requests_stay_counted(harness: Harness) -> None:
    harness.provider.add(TransportError("connection reset"))
    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)
    assert result.status is Status.FAILED and result.mode is Mode.LIVE
    assert harness.requests_counted() == 1
    assert run_count(harness.db) == 0


async def test_cap_blocks_with_budget_limit(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACE_MODEL_REQUEST_CAP", "1")
    first = publish(harness.db, CAMP, DIRECT_TEXT)
    second = publish(harness.db, CAMP, DIRECT_TEXT + " Second entry.")
    harness.provider.add(DIRECT, DIRECT)

    assert (await harness.service.investigate(first, PASSPHRASE)).status is Status.COMPLETED
    blocked = await harness.service.investigate(second, PASSPHRASE)

    assert blocked.status is Status.BUDGET_LIMIT and blocked.mode is None
    assert len(harness.provider.requests) == 1
    assert harness.requests_counted() == 1


@pytest.mark.parametrize(
    "content",
    [b"", b"   \n", b"{not json", json.dumps({"requests": -1}).encode(), b"[]"],
    ids=["empty", "blank", "corrupt", "negative", "wrong-shape"],
)
async def test_bad_ledger_refuses_without_calling_or_rewriting(
    harness: Harness, content: bytes
) -> None:
    harness.ledger_path.parent.mkdir(parents=True)
    harness.ledger_path.write_bytes(content)
    harness.provider.add(DIRECT)

    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)

    assert result.status is Status.UNAVAILABLE
    assert harness.provider.requests == []
    assert harness.ledger_path.read_bytes() == content


@pytest.mark.parametrize(
    ("raw", "cap"), [(None, 200), ("5", 5), ("0", 1), ("-3", 1), ("5000", 1000), ("x", 200)]
)
async def test_cap_is_read_from_the_environment_and_clamped(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, raw: str | None, cap: int
) -> None:
    if raw is not None:
        monkeypatch.setenv("TRACE_MODEL_REQUEST_CAP", raw)
    assert harness.service.ledger_snapshot().cap == cap


async def test_a_second_concurrent_check_abstains(harness: Harness) -> None:
    report_id = direct_report(harness)
    harness.provider.add(DIRECT)
    import threading

    held, release = threading.Event(), threading.Event()

    def other_check() -> None:  # another check (its own context) holds the ledger
        with harness.ledger().exclusive():
            held.set()
            release.wait(10)

    thread = threading.Thread(target=other_check)
    thread.start()
    try:
        assert held.wait(5)
        result = await harness.service.investigate(report_id, PASSPHRASE)
    finally:
        release.set()
        thread.join()
    assert result.status is Status.UNAVAILABLE
    assert harness.provider.requests == []
    assert harness.requests_counted() == 0


async def test_two_checks_at_once_one_abstains(harness: Harness) -> None:
    import asyncio

    first = publish(harness.db, CAMP, DIRECT_TEXT)
    second = publish(harness.db, CAMP, DIRECT_TEXT + " Another entry.")
    harness.provider.add(ScriptedReply(text=DIRECT, delay_s=0.3), DIRECT)

    results = await asyncio.gather(
        harness.service.investigate(first, PASSPHRASE),
        harness.service.investigate(second, PASSPHRASE),
    )

    assert sorted(r.status.value for r in results) == ["COMPLETED", "UNAVAILABLE"]
    assert harness.requests_counted() == 1


def test_error_types_map_to_statuses() -> None:
    assert status_for_error(BudgetExhausted("cap", cap=1, requests=1)) is Status.BUDGET_LIMIT
    assert status_for_error(LedgerBusy("busy")) is Status.UNAVAILABLE
    assert status_for_error(LedgerUnavailable("bad")) is Status.UNAVAILABLE
    assert status_for_error(NotConfigured("no key")) is Status.UNAVAILABLE
    assert status_for_error(TransportError("reset")) is Status.FAILED


# --- answers outside the allowed set -----------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"attribution": "RELAY", "referenced_source": "Kathmandu Times"},  # not on the menu
        {"attribution": "FIRSTHAND", "referenced_source": "NONE"},  # unknown label
        {"attribution": "DIRECT"},  # wrong shape
        {"attribution": "DIRECT", "referenced_source": "NONE", "confidence": 0.9},
        "DIRECT",
        "",
    ],
)
async def test_answers_outside_the_allowed_set_fail_and_save_nothing(
    harness: Harness, answer: object
) -> None:
    publish_hospital_example(harness.db)
    report_id = publish(
        harness.db, COMMUNITY_RELAY.source, f"{HOSPITAL} says Maya Gurung is in the ward."
    )
    harness.provider.add(answer)  # type: ignore[arg-type]

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.FAILED
    assert run_count(harness.db) == 0
    assert harness.requests_counted() == 1


async def test_the_menu_is_a_closed_enum_per_request(harness: Harness) -> None:
    publish_hospital_example(harness.db)
    report_id = publish(
        harness.db, CAMP, f"{HOSPITAL} and {POLICE} both list Maya Gurung. Tatopani."
    )
    harness.provider.add(DIRECT)
    await harness.service.investigate(report_id, PASSPHRASE)
    schema = harness.provider.requests[0].output_schema
    assert schema["properties"]["referenced_source"]["enum"] == [HOSPITAL, POLICE, "NONE"]


# --- the flow ------------------------------------------------------------------------


async def test_direct_completes_repeats_cached_and_reset_clears_it(harness: Harness) -> None:
    report_id = direct_report(harness)
    harness.provider.add(DIRECT)

    live = await harness.service.investigate(report_id, PASSPHRASE)
    cached = await harness.service.investigate(report_id, None)

    assert (live.status, live.mode) == (Status.COMPLETED, Mode.LIVE)
    assert (cached.status, cached.mode) == (Status.COMPLETED, Mode.CACHED)
    assert (cached.model, cached.run_at) == (live.model, live.run_at)
    assert cached.fingerprint == live.fingerprint
    assert len(harness.provider.requests) == 1 and harness.requests_counted() == 1
    [run] = saved_runs(harness.db)
    assert (run.status, run.mode, run.prompt_version) == ("COMPLETED", "LIVE", PROMPT_VERSION)
    assert run.usage_source == "estimate" and run.estimated_tokens > 0

    ledger_before = harness.ledger_path.read_bytes()
    with harness.db.session() as session:
        reset_demo(session)
    assert run_count(harness.db) == 0
    assert harness.ledger_path.read_bytes() == ledger_before  # reset never touches it


async def test_relay_retrieves_the_named_source_with_exactly_two_calls(harness: Harness) -> None:
    report_id = community_relay_id(harness.db)
    untouched = snapshot_people_claims_alerts(harness.db)
    harness.provider.add(
        {"attribution": "RELAY", "referenced_source": POLICE}, {"support": "DIFFERS"}
    )

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert (result.status, result.support) == (Status.NEEDS_REVIEW, "DIFFERS")
    assert len(harness.provider.requests) == 2 and harness.requests_counted() == 2
    compare_text = harness.provider.requests[1].messages[1].content
    assert "Duty officer's log" in compare_text  # the police report was retrieved
    assert [c.source for c in result.citations] == [COMMUNITY_RELAY.source, POLICE]
    assert snapshot_people_claims_alerts(harness.db) == untouched


async def test_relay_to_a_source_without_a_unique_report_needs_review_after_one_call(
    harness: Harness,
) -> None:
    publish(harness.db, POLICE, "Second police entry about Maya Gurung, taken at the post.")
    report_id = community_relay_id(harness.db)
    harness.provider.add({"attribution": "RELAY", "referenced_source": POLICE})

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert result.status is Status.NEEDS_REVIEW and result.support is None
    assert len(harness.provider.requests) == 1


async def test_relay_naming_none_needs_review_after_one_call(harness: Harness) -> None:
    harness.provider.add({"attribution": "RELAY", "referenced_source": "NONE"})
    result = await harness.service.investigate(police_report_id(harness.db), PASSPHRASE)
    assert result.status is Status.NEEDS_REVIEW
    assert len(harness.provider.requests) == 1 and run_count(harness.db) == 1


async def test_direct_label_naming_a_source_goes_to_review_after_one_call(
    harness: Harness,
) -> None:
    harness.provider.add({"attribution": "DIRECT", "referenced_source": POLICE})
    result = await harness.service.investigate(community_relay_id(harness.db), PASSPHRASE)
    assert result.status is Status.NEEDS_REVIEW
    assert len(harness.provider.requests) == 1


async def test_failed_comparison_is_partial_and_not_saved(harness: Harness) -> None:
    harness.provider.add(
        {"attribution": "RELAY", "referenced_source": POLICE}, {"support": "MAYBE"}
    )
    result = await harness.service.investigate(community_relay_id(harness.db), PASSPHRASE)
    assert result.status is Status.PARTIAL and not result.saved
    assert harness.requests_counted() == 2 and run_count(harness.db) == 0


RELIEF = "Relief Agency Demo"
RELAYING_TEXT = f"According to {RELIEF}, Maya Gurung, 24, reached the camp at noon."


def _ingest_without_text(db: Database, source_of: str) -> str:
    """A report from ``source_of``'s organisation with no text (ingested, not published)."""
    from datetime import UTC, datetime

    from trace_app.store.models import Report
    from trace_app.store.types import new_id

    with db.session() as session:
        template = session.scalar(select(Report).where(Report.id == source_of))
        assert template is not None
        row = Report(
            id=new_id("rep"),
            incident_id=template.incident_id,
            organization_id=template.organization_id,
            person_id=template.person_id,
            summary="Ingested without text",
            original_text="",
            reported_at=datetime(2026, 9, 27, 7, 0, tzinfo=UTC),
            references=[],
            person_name=template.person_name,
            person_age=template.person_age,
            status="seen",
            location="",
            position=999,
        )
        session.add(row)
        return row.id


@pytest.mark.parametrize("problem", ["missing", "over 3,000 characters"])
async def test_named_source_report_that_cannot_be_compared_is_partial_after_one_call(
    harness: Harness, problem: str
) -> None:
    """docs/decisions/0034: PARTIAL (text missing or too long; no comparison), not saved."""
    if problem == "missing":
        placeholder = publish(harness.db, RELIEF, "Placeholder entry.")
        _ingest_without_text(harness.db, placeholder)
        with harness.db.session() as session:  # keep only the text-less report from RELIEF
            from trace_app.store.models import Claim, Report

            session.query(Claim).filter(Claim.report_id == placeholder).delete()
            session.query(Report).filter(Report.id == placeholder).delete()
    else:
        publish(harness.db, RELIEF, "z" * 3001)
    report_id = publish(harness.db, CAMP, RELAYING_TEXT)
    harness.provider.add(
        {"attribution": "RELAY", "referenced_source": RELIEF}, {"support": "SUPPORTS"}
    )

    result = await harness.service.investigate(report_id, PASSPHRASE)

    assert (result.status, result.mode, result.saved) == (Status.PARTIAL, Mode.LIVE, False)
    assert RELIEF in result.reason and "cannot be compared" in result.reason
    assert (result.attribution, result.referenced_source, result.support) == (
        "RELAY",
        RELIEF,
        None,
    )
    assert len(harness.provider.requests) == 1 and harness.requests_counted() == 1
    assert result.requests_sent == 1 and run_count(harness.db) == 0


async def test_cap_reached_between_the_two_calls_is_partial_and_not_saved(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACE_MODEL_REQUEST_CAP", "1")
    harness.provider.add(
        {"attribution": "RELAY", "referenced_source": POLICE}, {"support": "SUPPORTS"}
    )

    result = await harness.service.investigate(community_relay_id(harness.db), PASSPHRASE)

    assert (result.status, result.saved, result.support) == (Status.PARTIAL, False, None)
    assert "comparison did not succeed" in result.reason and "cap of 1" in result.reason
    assert len(harness.provider.requests) == 1
    assert harness.requests_counted() == 1 and result.requests_sent == 1
    assert run_count(harness.db) == 0
    # the next check is refused outright: BUDGET_LIMIT, nothing sent
    again = await harness.service.investigate(community_relay_id(harness.db), PASSPHRASE)
    assert again.status is Status.BUDGET_LIMIT and len(harness.provider.requests) == 1


async def test_text_over_3000_characters_is_partial_before_any_call(harness: Harness) -> None:
    exactly = publish(harness.db, CAMP, (DIRECT_TEXT + " " + "x" * 3000)[:3000])
    over = publish(harness.db, CAMP, "y" * 3001)
    harness.provider.add(DIRECT)

    assert (await harness.service.investigate(over, PASSPHRASE)).status is Status.PARTIAL
    assert harness.provider.requests == [] and not harness.ledger_path.exists()
    assert (await harness.service.investigate(exactly, PASSPHRASE)).status is Status.COMPLETED


async def test_more_than_eight_named_sources_is_partial_before_any_call(
    harness: Harness,
) -> None:
    names = [f"Relief Agency {n} Demo" for n in range(9)]
    for name in names:
        publish(harness.db, name, f"Entry from {name}.")
    report_id = publish(harness.db, CAMP, "Heard from " + ", ".join(names) + ".")
    eight = publish(harness.db, CAMP, "I met staff of " + ", ".join(names[:8]) + " myself.")
    harness.provider.add(DIRECT)

    result = await harness.service.investigate(report_id, PASSPHRASE)
    assert result.status is Status.PARTIAL and harness.provider.requests == []
    assert (await harness.service.investigate(eight, PASSPHRASE)).status is Status.COMPLETED


async def test_fingerprint_is_identical_across_two_resets(harness: Harness) -> None:
    def fingerprints() -> list[str]:
        out = []
        for rid in (police_report_id(harness.db), community_relay_id(harness.db)):
            prepared = harness.service.prepare(rid)
            assert isinstance(prepared, Prepared), prepared
            out.append(prepared.fingerprint)
        return out

    with harness.db.session() as session:
        reset_demo(session)
    first = fingerprints()
    first_ids = police_report_id(harness.db)
    with harness.db.session() as session:
        reset_demo(session)
    assert fingerprints() == first
    assert police_report_id(harness.db) != first_ids  # ids changed, fingerprints did not


async def test_overrunning_call_fails_at_the_wall_clock_limit_and_stays_counted(
    harness: Harness,
) -> None:
    import time

    harness.provider.timeout_s = 0.2
    harness.provider.add(ScriptedReply(text=DIRECT, delay_s=3.0))
    started = time.monotonic()

    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)

    assert time.monotonic() - started < 2.0  # the late answer was not waited for
    assert result.status is Status.FAILED
    assert harness.requests_counted() == 1 and run_count(harness.db) == 0


def test_every_call_uses_the_spec_settings() -> None:
    nemotron = ModelSettings.from_env({}).provider_config()
    assert nemotron.model == NEMOTRON_MODEL
    assert nemotron.base_url == "https://integrate.api.nvidia.com/v1"
    assert nemotron.api_key_env == "NVIDIA_NIM_API_KEY"
    assert nemotron.timeout_s == CALL_TIMEOUT_S == 45.0
    assert nemotron.max_output_tokens == MAX_OUTPUT_TOKENS == 96
    assert nemotron.extra_body == {"chat_template_kwargs": {"enable_thinking": False}}


def test_reasoning_off_goes_only_on_the_nemotron_model() -> None:
    litellm = ModelSettings.from_env({"TRACE_MODEL_PROVIDER": "litellm"}).provider_config()
    assert litellm.model == "nvidia_nim/" + NEMOTRON_MODEL
    assert litellm.extra_body == {"chat_template_kwargs": {"enable_thinking": False}}
    other = ModelSettings.from_env(
        {"TRACE_MODEL": "qwen2.5-7b-instruct", "TRACE_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    ).provider_config()
    assert other.extra_body == {}
    assert other.api_key_env == ""  # another server needs no NVIDIA key


async def test_requests_carry_temperature_zero_and_96_tokens(harness: Harness) -> None:
    harness.provider.add(
        {"attribution": "RELAY", "referenced_source": POLICE}, {"support": "SUPPORTS"}
    )
    await harness.service.investigate(community_relay_id(harness.db), PASSPHRASE)
    assert [(r.temperature, r.max_output_tokens) for r in harness.provider.requests] == [
        (0.0, 96),
        (0.0, 96),
    ]
    assert {r.prompt_version for r in harness.provider.requests} == {PROMPT_VERSION}


async def test_provider_reported_usage_is_kept_with_its_source(harness: Harness) -> None:
    harness.provider.add(
        ScriptedReply(
            text=DIRECT, usage=Usage(prompt_tokens=321, completion_tokens=9, source="provider")
        )
    )
    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (321, 9)
    assert result.usage.source == "provider"
    snapshot = harness.ledger().snapshot()
    assert (snapshot.prompt_tokens, snapshot.completion_tokens) == (321, 9)


async def test_the_passphrase_is_never_stored_or_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    harness.provider.add(DIRECT)
    result = await harness.service.investigate(direct_report(harness), PASSPHRASE)
    assert result.status is Status.COMPLETED
    assert PASSPHRASE not in caplog.text and KEY not in caplog.text
    with harness.db.session() as session:
        stored = [
            json.dumps({c.name: str(getattr(r, c.name)) for c in r.__table__.columns})
            for r in session.scalars(select(InvestigationRun))
        ]
    assert stored and all(PASSPHRASE not in s for s in stored)
    assert PASSPHRASE not in json.dumps(result.as_json())
    assert PASSPHRASE not in harness.ledger_path.read_text()
    for shown in (harness.service.model, harness.service):
        assert PASSPHRASE not in repr(shown) and PASSPHRASE not in str(shown)


@pytest.mark.postgres
async def test_relay_flow_on_postgresql(pg_schema_url: str, ledger_path: Path) -> None:
    from trace_app.store.db import make_engine, migrate

    db = Database(make_engine(pg_schema_url))
    try:
        migrate(db.engine)
        with db.session() as session:
            reset_demo(session)
        provider = ScriptedProvider(
            [{"attribution": "RELAY", "referenced_source": POLICE}, {"support": "SUPPORTS"}],
            model=NEMOTRON_MODEL,
        )
        service = make_service(db, ledger_path, provider)
        relay = community_relay_id(db)
        result = await service.investigate(relay, PASSPHRASE)
        assert (result.status, result.support, len(provider.requests)) == (
            Status.NEEDS_REVIEW,
            "SUPPORTS",
            2,
        )
        assert (await service.investigate(relay, None)).mode is Mode.CACHED
        with db.session() as session:
            reset_demo(session)
        prepared = service.prepare(community_relay_id(db))
        assert getattr(prepared, "fingerprint", None) == result.fingerprint
    finally:
        db.dispose()


async def test_audit_log_records_every_exchange_without_secrets(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modelgate.ledger import JsonFileLedger
    from modelgate.recording import load_exchanges
    from trace_app.investigation.service import build_service
    from trace_app.settings import TraceSettings

    audit = tmp_path / "audit" / "exchanges.jsonl"
    monkeypatch.setenv("TRACE_MODEL_AUDIT_LOG", str(audit))
    provider = ScriptedProvider(
        [{"attribution": "RELAY", "referenced_source": POLICE}, {"support": "SUPPORTS"}],
        model=NEMOTRON_MODEL,
    )
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite:///unused.db")
    service = build_service(db, settings, provider_factory=lambda _config: provider)

    result = await service.investigate(community_relay_id(db), PASSPHRASE)

    assert result.status is Status.NEEDS_REVIEW
    exchanges = load_exchanges(audit)
    assert [e.output_name for e in exchanges] == ["AttributionResult", "SupportResult"]
    assert all(e.outcome == "ok" and e.prompt_version == PROMPT_VERSION for e in exchanges)
    text = audit.read_text()
    assert PASSPHRASE not in text and KEY not in text
    assert JsonFileLedger(settings.ledger_path).snapshot().requests == 2
