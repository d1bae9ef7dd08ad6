"""The audit trail: a change and its row commit together or not at all, the table is
append-only on both databases, and the trail can be read (API, page, CLI)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, signed_in
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from trace_app.demo import seed
from trace_app.domain import alert_actions, audit
from trace_app.domain.audit import UnauditedChangeError, require_audit
from trace_app.domain.errors import TraceError
from trace_app.domain.links import decide_link_and_commit
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_and_commit
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.store.models import (
    Alert,
    AlertCloseReason,
    AlertState,
    ClaimStatus,
    LinkDecision,
    Person,
    Report,
)
from trace_app.web.app import create_app


def _count(db: Database, model: Any) -> int:
    with db.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def _changes(db: Database) -> tuple[int, int, int]:
    """What the operations below change: reports, closed alerts, link decisions."""
    with db.sessions() as session:
        closed = session.scalar(
            select(func.count()).select_from(Alert).where(Alert.state == AlertState.CLOSED.value)
        )
        links = session.scalar(text("SELECT count(*) FROM person_links"))
        return (
            int(session.scalar(select(func.count()).select_from(Report)) or 0),
            int(closed or 0),
            int(links or 0),
        )


# One operation: (kind, valid?). Invalid ones are refused by the domain, with nothing saved.
OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["publish", "close", "link"]), st.booleans()), min_size=1, max_size=8
)


@pytest.mark.timeout(600)
def test_a_failed_change_leaves_no_row_and_a_successful_one_exactly_one(
    database: Database,
) -> None:
    with database.session() as session:
        incident_id = seed.reset_demo(session).id

    @settings(
        max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(OPERATIONS)
    def run(operations: list[tuple[str, bool]]) -> None:
        for kind, valid in operations:
            rows_before = _count(database, AuditEvent)
            changes_before = _changes(database)
            with require_audit(database.sessions()) as session:
                try:
                    _apply(session, incident_id, kind, valid)
                    session.commit()
                except TraceError:
                    session.rollback()
            changed = _changes(database) != changes_before
            rows = _count(database, AuditEvent) - rows_before
            assert rows == (1 if changed else 0), (kind, valid, rows, changed)
            if valid and kind != "close":
                assert changed, (kind, valid)

    run()


def _apply(session: Any, incident_id: str, kind: str, valid: bool) -> None:
    if kind == "publish":
        publish_and_commit(
            session,
            PublishReportInput(
                incident_id=incident_id,
                source="Audit Test Org",
                summary="Seen at the camp." if valid else "  ",
                original_text="Our nurse saw her at the camp.",
                person=PersonInput(name="Audit Person"),
                status=ClaimStatus.SEEN,
            ),
            actor=TEST_OPERATOR,
        )
    elif kind == "close":
        open_alert = session.scalars(
            select(Alert.id).where(Alert.state == AlertState.OPEN.value).limit(1)
        ).first()
        alert_id = open_alert if (valid and open_alert) else "alr_missing"
        # found safe publishes a claim for the closer's organisation: still one audit row
        alert_actions.close_alert(
            session,
            alert_id,
            AlertCloseReason.FOUND_SAFE,
            "found at the school",
            actor=TEST_OPERATOR,
            source="Audit School Test",
        )
    else:
        people = session.scalars(
            select(Person.id).where(Person.incident_id == incident_id).order_by(Person.id).limit(2)
        ).all()
        other = people[1] if valid else people[0]  # the same person twice is refused
        session.rollback()  # only reads so far: the decision opens its own write transaction
        decide_link_and_commit(
            session, people[0], other, LinkDecision.DIFFERENT, "checked", actor=TEST_OPERATOR
        )


def test_a_route_session_cannot_commit_a_change_without_its_row(database: Database) -> None:
    with database.session() as session:
        seed.reset_demo(session)
    with require_audit(database.sessions()) as session:
        person = session.scalars(select(Person).limit(1)).one()
        person.age = 99
        with pytest.raises(UnauditedChangeError):
            session.commit()
        session.rollback()
    with require_audit(database.sessions()) as session:
        person = session.scalars(select(Person).limit(1)).one()
        person.age = 98
        audit.record(session, TEST_OPERATOR, "person.age", object_type="person", object_id="p")
        session.commit()  # with its row, it goes through


def test_the_trail_is_append_only(database: Database) -> None:
    with database.sessions() as session:
        audit.record(session, TEST_OPERATOR, "test.action", object_id="x")
        session.commit()
    for statement in (
        "UPDATE audit_events SET action = 'forged'",
        "DELETE FROM audit_events",
    ):
        with database.sessions() as session, pytest.raises(DBAPIError, match="append-only"):
            session.execute(text(statement))
        with database.sessions() as session:
            assert session.scalars(select(AuditEvent.action)).all() == ["test.action"]


def test_a_demo_reset_keeps_the_trail_and_the_accounts(database: Database) -> None:
    from trace_app import demo_reset
    from trace_app.accounts.users import NewMembership, create_user, find_user
    from trace_app.settings import TraceSettings

    with require_audit(database.sessions()) as session:
        create_user(
            session,
            TEST_OPERATOR,
            "keeps-org",
            "a long enough password",
            NewMembership("reporter", "Central Hospital Demo"),
        )
        session.commit()
    settings = TraceSettings(home=database_home(), database_url="sqlite://")
    for _ in range(2):
        with require_audit(database.sessions()) as session:
            demo_reset.reset(session, settings, actor=TEST_OPERATOR)
            session.commit()
    with database.sessions() as session:
        actions = session.scalars(select(AuditEvent.action).order_by(AuditEvent.sequence)).all()
        user = find_user(session, "keeps-org")
        assert user is not None
        assert user.memberships[0].organization is not None
        assert user.memberships[0].organization.name == "Central Hospital Demo"
    assert actions == ["user.create", "demo.reset", "demo.reset"]


def database_home() -> Any:
    import tempfile
    from pathlib import Path

    return Path(tempfile.mkdtemp())


@pytest.fixture
def app(sqlite_settings: Any) -> Iterator[FastAPI]:
    made = create_app(dataclasses.replace(sqlite_settings, publish_limit="1000/minute"))
    yield made
    made.state.db.dispose()


def test_the_audit_api_and_page_are_for_admins(app: FastAPI) -> None:
    reporter = signed_in(app, role="reporter", organization="Central Hospital Demo", name="rep")
    incident_id = reporter.get("/api/incidents").json()["items"][0]["id"]
    body = {
        "incident_id": incident_id,
        "summary": "Seen.",
        "original_text": "Seen at the camp.",
        "person": {"name": "Audited Person"},
        "status": "seen",
    }
    report_id = reporter.post("/api/reports", json=body).json()["id"]
    assert reporter.get("/api/audit").status_code == 403
    assert reporter.get("/audit").status_code == 403
    admin = signed_in(app, role="admin", organization=None, name="boss")
    page = admin.get("/api/audit", params={"actor": "rep"}).json()
    # the two refused reads are on the trail too (ASVS 5.0 16.3.2), newest first
    actions = [e["action"] for e in page["items"]]
    assert actions == ["access.refused", "access.refused", "report.publish", "login"]
    assert page["items"][0]["object_id"] == "GET /audit"
    assert page["items"][0]["note"] == "audit:read"
    assert page["items"][0]["outcome"] == "refused"
    published = page["items"][2]
    assert published["object_id"] == report_id and published["incident_id"] == incident_id
    assert published["after"]["source"] == "Central Hospital Demo"
    assert published["actor_kind"] == "user" and published["client"] == "testclient"
    by_object = admin.get("/api/audit", params={"object": report_id}).json()
    assert by_object["total"] == 1
    users = admin.get("/api/audit", params={"action": "user."}).json()
    assert {e["action"] for e in users["items"]} == {"user.create"}
    html = admin.get("/audit", params={"actor": "rep"}).text
    assert "report.publish" in html and "rep" in html
    # the "signed in as" line names the role and organisation
    assert "rep (reporter, Central Hospital Demo)" in reporter.get("/").text


def test_the_cli_manages_accounts_and_reads_the_trail(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_app.cli import app as cli

    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    runner = CliRunner()

    def run(*args: str, stdin: str | None = None) -> Any:
        return runner.invoke(cli, list(args), input=stdin)

    made = run(
        "user",
        "create",
        "ops-admin",
        "--role",
        "admin",
        "--password-stdin",
        stdin="a long admin passphrase\n",
    )
    assert made.exit_code == 0, made.output
    weak = run("user", "create", "weak", "--role", "viewer", "--password-stdin", stdin="short\n")
    assert weak.exit_code == 2 and "at least 12 characters" in weak.output
    nobody = run(
        "user",
        "create",
        "rep",
        "--role",
        "reporter",
        "--password-stdin",
        stdin="a long reporter passphrase\n",
    )
    assert nobody.exit_code == 2 and "organisation" in nobody.output
    token = run("token", "create", "ops-admin", "--scope", "read", "--scope", "audit:read")
    assert token.exit_code == 0, token.output
    secret = token.output.strip().splitlines()[-1]
    assert secret.startswith("trc_") and len(secret) >= 47
    listed = run("token", "list")
    assert secret not in listed.output and secret[:10] in listed.output
    token_id = listed.output.split("\t", 1)[0]
    assert run("token", "revoke", token_id).exit_code == 0
    assert "revoked" in run("token", "list").output
    users = run("user", "list")
    assert "ops-admin\tadmin in every incident" in users.output
    trail = run("audit", "--json")
    lines = [line for line in trail.output.splitlines() if line.startswith("{")]
    import json

    actions = [json.loads(line)["action"] for line in lines]
    assert actions == ["user.create", "token.create", "token.revoke"]
    assert all(json.loads(line)["actor"].startswith("operator (command line") for line in lines)
    assert secret not in trail.output and "passphrase" not in trail.output
