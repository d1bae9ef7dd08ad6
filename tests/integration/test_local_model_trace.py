"""A real Trace investigation through the real embedded model server.

Asserts what must hold whatever the model answers: answers inside the closed sets,
statuses that follow the decision rules, a ledger that counts exactly the requests sent,
and saved runs that match the result. Which label the model picks is not asserted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from modelgate.local_server import LocalModelServer
from trace_app.demo.data import COMMUNITY_RELAY, POLICE
from trace_app.demo.seed import seed_demo
from trace_app.investigation.answers import NO_SOURCE
from trace_app.investigation.service import build_service, ledger_factory_for
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import InvestigationRun, Organization, Report

pytestmark = [pytest.mark.localmodel, pytest.mark.timeout(600)]

PASSPHRASE = "integration-test-passphrase"


@pytest.fixture
def trace_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_model_server: LocalModelServer
) -> TraceSettings:
    for name in ("NVIDIA_NIM_API_KEY", "TRACE_MODEL_API_KEY", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRACE_MODEL_PROVIDER", "openai")
    monkeypatch.setenv("TRACE_MODEL", local_model_server.model_alias)
    monkeypatch.setenv("TRACE_MODEL_BASE_URL", local_model_server.base_url)
    monkeypatch.setenv("TRACE_MODEL_STRUCTURED_OUTPUT", "json_object_schema")
    monkeypatch.setenv("TRACE_LIVE_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("TRACE_MODEL_REQUEST_CAP", "50")
    return TraceSettings.from_env()


async def test_relay_report_investigated_live_then_cached(
    trace_env: TraceSettings, local_model_server: LocalModelServer
) -> None:
    db = Database.from_settings(trace_env)
    try:
        with db.session() as session:
            seed_demo(session)
        with db.session() as session:
            report_id = session.scalar(
                select(Report.id)
                .join(Organization, Report.organization_id == Organization.id)
                .where(Report.original_text == COMMUNITY_RELAY.text)
            )
        assert report_id is not None
        service = build_service(db, trace_env)
        ledger = ledger_factory_for(trace_env)
        before = ledger().snapshot()

        result = await service.investigate(report_id, PASSPHRASE)

        after = ledger().snapshot()
        # the ledger counted exactly what was sent: one label call, at most one comparison
        assert 1 <= result.requests_sent <= 2
        assert after.requests - before.requests == result.requests_sent
        assert result.status in {
            Status.COMPLETED,
            Status.NEEDS_REVIEW,
            Status.PARTIAL,
            Status.FAILED,
        }
        if result.attribution is not None:  # a schema-valid answer came back
            assert result.mode is Mode.LIVE
            assert result.attribution in {"DIRECT", "RELAY", "UNCLEAR"}
            assert result.referenced_source in {POLICE, NO_SOURCE}  # the menu, or NONE
            assert result.model == local_model_server.model_alias  # as the server reports it
            assert result.usage.source == "provider"
            assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
            assert after.prompt_tokens - before.prompt_tokens >= result.usage.prompt_tokens
            if result.attribution == "DIRECT" and result.referenced_source == NO_SOURCE:
                assert result.status is Status.COMPLETED
            if result.attribution == "UNCLEAR":
                assert result.status is Status.NEEDS_REVIEW
            if result.requests_sent == 2:  # relay to the police report: compared
                assert result.attribution == "RELAY" and result.referenced_source == POLICE
                assert result.status in {Status.NEEDS_REVIEW, Status.PARTIAL}
                if result.status is Status.NEEDS_REVIEW:
                    assert result.support in {"SUPPORTS", "DIFFERS", "UNCLEAR"}
                    assert [c.role for c in result.citations] == ["report", "referenced"]
        else:
            assert result.status is Status.FAILED

        with db.session() as session:
            runs = session.scalars(
                select(InvestigationRun).where(InvestigationRun.report_id == report_id)
            ).all()
            assert result.saved is result.status.saved
            assert len(runs) == (1 if result.saved else 0)
            if runs:
                run = runs[0]
                assert run.status == result.status.value
                assert run.fingerprint == result.fingerprint
                assert run.attribution == result.attribution
                assert run.prompt_tokens == result.usage.prompt_tokens
                assert run.mode == Mode.LIVE.value

        if result.saved:  # shown again: CACHED, no call, no passphrase, ledger unchanged
            again = await service.investigate(report_id, None)
            assert again.mode is Mode.CACHED
            assert again.status is result.status
            assert again.requests_sent == 0
            assert ledger().snapshot().requests == after.requests
    finally:
        db.dispose()
