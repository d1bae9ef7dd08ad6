"""The review queue as an indexed read over stored decisions (ADR 0084), on SQLite and
PostgreSQL: the same items, order and exact total as deciding every run again, a rules
change decided again once (audited), and a shown run read without deciding it again.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR
from sqlalchemy import func, select, update
from test_reviews import FIRST_HAND_TEXT, HEARSAY_TEXT, UNCLEAR_TEXT, publish, save_run

from trace_app.domain.reviews import ReviewValue
from trace_app.investigation import evidence_store, review_queue, rules
from trace_app.investigation.attribution_cues import find_cues
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.store.account_models import AuditEvent
from trace_app.store.db import Database
from trace_app.store.models import Incident, InvestigationRun, Report, ReviewDecision
from trace_app.store.types import new_id


@pytest.fixture
def incident(database: Database) -> str:
    with database.session() as s:
        row = Incident(id=new_id("inc"), name="Indexed Queue Incident")
        s.add(row)
        return row.id


def full_scan(database: Database, incident_id: str) -> list[str]:
    """The queue's rule applied from scratch to every run, ignoring every stored decision:
    each report's latest run, decided now from its labels and cited text, NEEDS_REVIEW,
    and no person decided on it; in priority order (no open alert and no child or older
    person here), that is the oldest report first, then the run's id."""
    with database.sessions() as s:
        runs = s.scalars(
            select(InvestigationRun).where(InvestigationRun.incident_id == incident_id)
        )
        latest: dict[str, InvestigationRun] = {}
        for run in runs:
            shown = latest.get(run.report_id)
            if shown is None or (run.run_at, run.id) > (shown.run_at, shown.id):
                latest[run.report_id] = run
        decided = set(s.scalars(select(ReviewDecision.run_id)))
        reported = {
            row.id: row.reported_at for row in s.execute(select(Report.id, Report.reported_at))
        }
        waiting = []
        for run in latest.values():
            text = next(c["excerpt"] for c in run.citations if c["role"] == "report")
            status = rules.redecide_saved(
                Status(run.status), run.reason, run.attribution, run.referenced_source,
                find_cues(text),
            ).status  # fmt: skip
            if status is Status.NEEDS_REVIEW and run.id not in decided:
                waiting.append((reported[run.report_id], run.id, run.report_id))
    return [report_id for *_, report_id in sorted(waiting)]


def queue(database: Database, incident_id: str, *, offset: int = 0, limit: int = 500) -> Any:
    with database.sessions() as s:
        return review_queue.review_queue(s, incident_id, offset=offset, limit=limit)


def queue_report_ids(database: Database, incident_id: str, limit: int = 7) -> list[str]:
    """Every page of the queue, ``limit`` items at a time."""
    ids: list[str] = []
    while True:
        page = queue(database, incident_id, offset=len(ids), limit=limit)
        ids += [item.report.id for item in page.items]
        if len(page.items) < limit:
            return ids


def redecide_audits(database: Database) -> int:
    with database.sessions() as s:
        query = select(func.count()).select_from(AuditEvent)
        return int(s.scalar(query.where(AuditEvent.action == "investigation.redecide")) or 0)


def test_the_indexed_queue_equals_deciding_every_run_again(
    database: Database, incident: str
) -> None:
    """Generated incident: reports read as unclear, hearsay or first-hand; saved NEEDS_REVIEW
    or COMPLETED; some with a newer run, some with runs at the same time, some decided."""
    rng = random.Random(24)
    texts = [UNCLEAR_TEXT, HEARSAY_TEXT, FIRST_HAND_TEXT]
    reports = []
    for n in range(60):
        report_id = publish(database, incident, f"{rng.choice(texts)} Entry {n}.", n)
        reports.append(report_id)
        for _ in range(rng.choice([1, 1, 2, 3])):
            completed = rng.random() < 0.5
            save_run(
                database,
                report_id,
                status="COMPLETED" if completed else "NEEDS_REVIEW",
                attribution="DIRECT" if completed else "UNCLEAR",
                minutes=rng.choice([0, 5, 5, 30, 60]),  # equal times: the id decides
            )
    expected = full_scan(database, incident)
    assert queue_report_ids(database, incident) == expected
    assert queue(database, incident, limit=1).total == len(expected) > 10

    # people decide on some; a newer run puts one of them back
    for report_id in expected[::3]:
        with database.sessions() as s:
            review_queue.decide(s, report_id, ReviewValue.FIRST_HAND, "phoned", actor=TEST_OPERATOR)
    save_run(database, expected[0], minutes=90)
    expected = full_scan(database, incident)
    assert queue_report_ids(database, incident) == expected
    assert queue(database, incident, limit=1).total == len(expected)
    assert expected[-1] == reports[reports.index(expected[-1])]  # a real report id


def test_a_rules_change_decides_again_once_and_audits_it(
    database: Database, incident: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hearsay = publish(database, incident, HEARSAY_TEXT, 1)
    unclear = publish(database, incident, UNCLEAR_TEXT, 2)
    hearsay_run = save_run(database, hearsay, status="COMPLETED", attribution="DIRECT")
    save_run(database, unclear, minutes=1)
    # runs written straight into the store have no decision yet: the first look decides
    assert [i.report.id for i in queue(database, incident).items] == [hearsay, unclear]
    assert redecide_audits(database) == 1
    assert queue(database, incident).total == 2 and redecide_audits(database) == 1

    # a run whose decision older rules stored as COMPLETED is decided again
    with database.session() as s:
        s.execute(
            update(InvestigationRun)
            .where(InvestigationRun.id == hearsay_run)
            .values(
                decided_status="COMPLETED", decided_version="trace-rules-0", awaiting_review=False
            )
        )
    assert [i.report.id for i in queue(database, incident).items] == [hearsay, unclear]
    assert redecide_audits(database) == 2

    # new rules: every run is decided again, once
    monkeypatch.setattr(rules, "RULES_VERSION", "trace-rules-next")
    assert queue(database, incident).total == 2
    assert redecide_audits(database) == 3
    with database.sessions() as s:
        versions = set(s.scalars(select(InvestigationRun.decided_version)))
        audit = s.scalars(
            select(AuditEvent).where(AuditEvent.action == "investigation.redecide")
        ).all()[-1]
    assert versions == {rules.decision_version()} and versions != {None}
    assert audit.actor_kind == "system" and audit.after == {
        "runs": 2,
        "decided_with": rules.decision_version(),
    }
    queue(database, incident)
    assert redecide_audits(database) == 3


def test_a_shown_run_reads_its_stored_decision(
    database: Database, incident: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    hearsay = publish(database, incident, HEARSAY_TEXT)
    run_id = save_run(database, hearsay, status="COMPLETED", attribution="DIRECT")
    with database.sessions() as s:
        run = s.get(InvestigationRun, run_id)
        assert run is not None and run.decided_version is None
        stale = evidence_store.result_from_run(run)  # no stored decision: decided here
    queue(database, incident)  # stores it

    def never(text: str) -> Any:
        raise AssertionError("a run decided with the current rules was decided again")

    monkeypatch.setattr(evidence_store, "find_cues", never)
    with database.sessions() as s:
        run = s.get(InvestigationRun, run_id)
        assert run is not None and run.decided_version == rules.decision_version()
        shown = evidence_store.result_from_run(run)
        assert (shown.status, shown.reason, shown.evidence) == (
            stale.status,
            stale.reason,
            stale.evidence,
        )
        assert shown.status is Status.NEEDS_REVIEW and shown.lowered_by == stale.lowered_by
        run.decided_version = "trace-rules-0"  # in memory only: now it must decide again
        with pytest.raises(AssertionError, match="decided again"):
            evidence_store.result_from_run(run)
        s.rollback()


def test_saving_a_run_moves_its_reports_queue_place(database: Database, incident: str) -> None:
    unclear = publish(database, incident, UNCLEAR_TEXT)
    first = save_run(database, unclear)
    assert [i.run.id for i in queue(database, incident).items] == [first]

    def save(status: Status, hours: int, fingerprint: str) -> str:
        """A run of the same report saved through the investigation's own path."""
        with database.session() as s:
            saved = s.get(InvestigationRun, first)
            assert saved is not None
            result = replace(
                evidence_store.result_from_run(saved, shown_as=Mode.LIVE),
                status=status,
                fingerprint=fingerprint,
                run_at=saved.run_at + timedelta(hours=hours),
            )
            run = evidence_store.run_from_result(incident, result)
            evidence_store.save_run(s, run)
            return run.id

    def awaiting() -> set[str]:
        with database.sessions() as s:
            query = select(InvestigationRun.id).where(InvestigationRun.awaiting_review)
            return set(s.scalars(query))

    completed = save(Status.COMPLETED, 1, "fp-completed")
    assert queue(database, incident).total == 0 and awaiting() == set()
    newest = save(Status.NEEDS_REVIEW, 2, "fp-newest")
    assert [i.run.id for i in queue(database, incident).items] == [newest]
    # a run saved now but made earlier (a replayed recording) is not the one shown
    save(Status.NEEDS_REVIEW, -5, "fp-older")
    assert [i.run.id for i in queue(database, incident).items] == [newest]
    assert awaiting() == {newest} and completed != newest


def test_recent_decisions_read_the_newest_index_range(tmp_path: Any) -> None:
    """The Reviews page's "Recently decided" reads the incident's newest decisions from
    the end of an index, not every decision of the incident sorted (20 ms for 10,000 on
    SQLite before migration 0017)."""
    from sqlalchemy import event

    from trace_app.domain.reviews import recent_decisions
    from trace_app.store.db import make_engine, migrate

    database = Database(make_engine(f"sqlite:///{tmp_path / 'plan.db'}"))
    migrate(database.engine)
    with database.session() as s:
        s.add(Incident(id="inc_plan", name="Plan"))
    seen: list[tuple[str, Any]] = []

    def keep(_c: Any, _cur: Any, statement: str, params: Any, _ctx: Any, _many: bool) -> None:
        seen.append((statement, params))

    event.listen(database.engine, "before_cursor_execute", keep)
    with database.sessions() as s:
        assert recent_decisions(s, "inc_plan") == []
    event.remove(database.engine, "before_cursor_execute", keep)
    statement, params = next((sql, p) for sql, p in seen if "review_decisions" in sql)
    with database.engine.connect() as conn:
        plan = " ".join(
            str(row) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params)
        )
    database.dispose()
    assert "ix_review_decisions_incident_newest" in plan, plan
    assert "TEMP B-TREE" not in plan, plan
