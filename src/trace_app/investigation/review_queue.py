"""The review queue: NEEDS_REVIEW results that await a person's decision (ADR 0063).

The rule, in one place:

- A report is in its incident's queue when the run its result card shows (its latest
  saved run), decided with the current rules exactly as the card decides it
  (:func:`evidence_store.result_from_run`), is NEEDS_REVIEW, and no person has recorded
  a decision on that run.
- The queue lists them by priority (:func:`trace_app.domain.reviews.priority`, the rule):
  a report whose person, or a record linked to it, has an open alert first; then one
  about a child or an older person; then the oldest report first. The open-alert lane
  is read from the incident's open alerts; the rest is a range of the index
  ``(incident_id, awaiting_review, review_rank, report_reported_at, id)`` (ADR 0150).
  Filters: the report's organisation, the reason it waits (:class:`ReviewReason`) and
  who has taken it (``assign to me``, :func:`trace_app.domain.reviews.assign`).
- Each run stores that decision and whether it is in the queue (ADR 0084), so the queue
  is an indexed read with an exact total. When the rules (or cue words) changed since a
  run of the incident was decided, the next look at the queue decides those runs again
  first, as Trace itself (one audit row), then reads.
- A decision takes the report out of the queue. A newer run of the report (its evidence,
  model or prompt changed, so its content fingerprint did) is a result nobody has looked
  at: the report enters the queue again, and the earlier decision is shown beside it and
  stays the report's current decision until a person records a new one.
- Only a report whose shown result is NEEDS_REVIEW can be decided
  (:func:`decide`); a later decision on the same result supersedes the earlier one,
  which is kept.

Code and people only: the model's labels are what the rules read, but no model output
ever enters the queue by itself, and a decision is only recorded through :func:`decide`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, exists, func, select, union, update
from sqlalchemy.orm import Session, joinedload

from trace_app.domain import audit, reviews
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError
from trace_app.domain.queries import Page
from trace_app.domain.reviews import Priority, ReviewRefusedError, ReviewValue
from trace_app.investigation import evidence_store
from trace_app.investigation.answers import Attribution
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.rules import decision_version
from trace_app.investigation.vocabulary import Status
from trace_app.store.db import WRITE_TRANSACTION
from trace_app.store.models import (
    Alert,
    AlertState,
    InvestigationRun,
    Organization,
    Person,
    Report,
    ReviewAssignment,
    ReviewDecision,
)


class ReviewReason(enum.StrEnum):
    """Why a result waits for a person, from the model's saved label (a queue filter)."""

    # the report passes on another source's information
    RELAY = "relay"
    # the model read it as first-hand, but the rules did not accept that on their own
    FIRST_HAND_DOUBTED = "first_hand_doubted"
    # where the information came from is unclear
    UNCLEAR = "unclear"

    @property
    def words(self) -> str:
        return REASON_WORDS[self]


REASON_WORDS: dict[ReviewReason, str] = {
    ReviewReason.RELAY: "Passes on another source",
    ReviewReason.FIRST_HAND_DOUBTED: "First-hand, not confirmed by its words",
    ReviewReason.UNCLEAR: "Source unclear",
}


def reason_of(attribution: str | None) -> ReviewReason:
    if attribution == Attribution.RELAY:
        return ReviewReason.RELAY
    if attribution == Attribution.DIRECT:
        return ReviewReason.FIRST_HAND_DOUBTED
    return ReviewReason.UNCLEAR


def _reason_sql(reason: ReviewReason) -> ColumnElement[bool]:
    column = InvestigationRun.attribution
    if reason is ReviewReason.UNCLEAR:
        known = [Attribution.RELAY.value, Attribution.DIRECT.value]
        return column.is_(None) | column.not_in(known)
    wanted = Attribution.RELAY if reason is ReviewReason.RELAY else Attribution.DIRECT
    return column == wanted.value


# A filtered queue counts its rows up to here (or just past the page asked for, when that
# is further): beyond it the page says "1,000 or more" (``Page.total_at_least``).
FILTERED_TOTAL_CAP = 1000


@dataclass(frozen=True, slots=True)
class QueueFilter:
    """What a person narrowed the queue to; every field optional."""

    organization_id: str | None = None
    reason: ReviewReason | None = None
    assigned_to: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.organization_id or self.reason or self.assigned_to)


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One report awaiting a decision: the run shown, its result as the card shows it,
    and the report's current decision if a person decided on an earlier run."""

    report: Report
    run: InvestigationRun
    result: InvestigationResult
    earlier_review: ReviewDecision | None
    priority: Priority = Priority.OTHER
    assignment: ReviewAssignment | None = None

    @property
    def reason(self) -> ReviewReason:
        return reason_of(self.run.attribution)


def review_queue(
    session: Session,
    incident_id: str,
    *,
    offset: int,
    limit: int,
    only: QueueFilter | None = None,
) -> Page[QueueItem]:
    """The incident's queue in priority order (:func:`reviews.priority`), one page of it,
    and its exact total, narrowed by ``only``. Never a model; writes only to re-decide
    runs decided with older rules (:func:`redecide_for_rules_change`) or to set the queue
    keys of runs saved without them (:func:`set_queue_keys`).

    Two lanes: the runs whose person has an open alert, read from the incident's open
    alerts (their people's reports, then those reports' runs), and sorted; then the
    others, a range of the priority index read in its order. A page takes from the first
    lane until it is used up. "Assigned to me" reads from the account's assignments
    instead. Unfiltered, the total is an index range count; filtered, a count that stops at
    :data:`FILTERED_TOTAL_CAP` rows, or just past the page asked for (``total_at_least``)."""
    only = only or QueueFilter()
    at_least = False
    redecide_for_rules_change(session, incident_id)
    set_queue_keys(session, incident_id)
    params = {"incident_id": incident_id}
    alerting = _about_open_alert(incident_id)
    if only.assigned_to:
        held = _assigned(incident_id, only.assigned_to)
        first_lane = _queue(incident_id, only, held).where(alerting)
        other_lane = _queue(incident_id, only, held).where(~alerting)
        total = _count(session, _queue(incident_id, only, held), params)
    else:
        alert_reports = select(Report.id).where(alerting)
        first_lane = _queue(incident_id, only, alert_reports)
        other_lane = _queue(incident_id, only).where(~alerting)
        if only.any:
            # a filter's exact total would count the whole queue (14-27x the page on
            # SQLite at 100,000 runs): count as far as the page needs, at least the cap
            cap = max(FILTERED_TOTAL_CAP, offset + limit + 1)
            total = _count(session, _queue(incident_id, only), params, cap=cap)
            at_least = total >= cap
        else:
            total = evidence_store.awaiting_count(session, incident_id)
    found = _page(session, first_lane, params, offset, limit)
    runs: list[tuple[InvestigationRun, bool]] = [(run, True) for run in found]
    if len(runs) < limit and offset + len(runs) < total:
        # where the first lane ends: known from this page unless it began after it
        in_first_lane = offset + len(found) if found else _count(session, first_lane, params)
        rest_offset = max(0, offset - in_first_lane)
        rest = _page(session, other_lane, params, rest_offset, limit - len(runs))
        runs += [(run, False) for run in rest]
    ids = [run.report_id for run, _ in runs]
    current = reviews.latest_reviews(session, ids)
    held_by = reviews.assignments(session, ids)
    items = [
        QueueItem(
            run.report,
            run,
            evidence_store.result_from_run(run),
            current.get(run.report_id),
            reviews.priority(alert, run.review_rank),
            held_by.get(run.report_id),
        )
        for run, alert in runs
    ]
    return Page(items=items, total=total, offset=offset, limit=limit, total_at_least=at_least)


def _queue(
    incident_id: str, only: QueueFilter, among: Select[str] | None = None
) -> Select[InvestigationRun]:
    """The queue's rows, narrowed by ``only`` (no order yet). ``among``: only the runs of
    these reports, read from them (a few) rather than from the queue's index range (the
    flag is then tested on each of their runs, so no planner walks the whole range)."""
    query = select(InvestigationRun).join(Report, Report.id == InvestigationRun.report_id)
    if among is None:
        query = query.where(
            InvestigationRun.incident_id == incident_id,
            InvestigationRun.awaiting_review.is_(True),
        )
    else:
        query = query.where(
            InvestigationRun.report_id.in_(among),
            func.coalesce(InvestigationRun.awaiting_review, False).is_(True),
        )
    if only.organization_id:
        query = query.where(Report.organization_id == only.organization_id)
    if only.reason is not None:
        query = query.where(_reason_sql(only.reason))
    return query


def _assigned(incident_id: str, name: str) -> Select[str]:
    return select(ReviewAssignment.report_id).where(
        ReviewAssignment.incident_id == incident_id, ReviewAssignment.assigned_to == name
    )


def _about_open_alert(incident_id: str) -> ColumnElement[bool]:
    """A report whose person has an open alert row, or whose linked group has one: the
    incident's open alerts (an index range), their people's reports, and the records
    linked to a grouped one (few)."""
    alerting = select(Alert.person_id).where(
        Alert.incident_id == incident_id, Alert.state == AlertState.OPEN.value
    )
    groups = select(Person.group_id).where(Person.id.in_(alerting), Person.group_id.is_not(None))
    linked = select(Person.id).where(Person.group_id.in_(groups))
    # one IN over a UNION, not two INs joined by OR: PostgreSQL then estimates it as the
    # few people it is and reads their reports by index
    return Report.person_id.in_(union(alerting, linked))


def _count(
    session: Session, query: Select[Any], params: dict[str, str], *, cap: int | None = None
) -> int:
    """The rows of ``query``; with ``cap``, at most ``cap`` of them (a LIMIT under the
    count, so the database stops reading there)."""
    if cap is None:
        counted = query.with_only_columns(func.count(InvestigationRun.id)).order_by(None)
    else:
        rows = query.with_only_columns(InvestigationRun.id).order_by(None).limit(cap)
        counted = select(func.count()).select_from(rows.subquery())
    return int(session.scalar(counted, params) or 0)


def _page(
    session: Session,
    query: Select[InvestigationRun],
    params: dict[str, str],
    offset: int,
    limit: int,
) -> list[InvestigationRun]:
    ordered = (
        query.options(
            joinedload(InvestigationRun.report).joinedload(Report.organization),
            joinedload(InvestigationRun.report).joinedload(Report.person),
        )
        .order_by(
            InvestigationRun.review_rank,
            InvestigationRun.report_reported_at,
            InvestigationRun.id,
        )
        .offset(offset)
        .limit(limit)
    )
    return list(session.scalars(ordered, params).unique())


def set_queue_keys(session: Session, incident_id: str) -> int:
    """Set the queue keys (``review_rank``, ``report_reported_at``) of the incident's
    awaiting runs saved without them (before migration 0018, or by a process that never loaded
    :mod:`trace_app.domain.reviews`) and commit, audited as Trace's own
    ``review.order``. One indexed probe and nothing else when there are none."""
    unset = exists().where(
        InvestigationRun.incident_id == incident_id,
        InvestigationRun.awaiting_review.is_(True),
        InvestigationRun.review_rank.is_(None),
    )
    if not session.scalar(select(unset)):
        return 0
    session.commit()
    age = func.coalesce(Report.person_age, Person.age)
    try:
        session.connection(execution_options=WRITE_TRANSACTION)
        # one joined UPDATE (UPDATE ... FROM on both databases), not a lookup per run
        result = session.execute(
            update(InvestigationRun)
            .where(
                InvestigationRun.incident_id == incident_id,
                InvestigationRun.awaiting_review.is_(True),
                InvestigationRun.review_rank.is_(None),
                Report.id == InvestigationRun.report_id,
                Person.id == Report.person_id,
            )
            .values(review_rank=reviews.age_rank_sql(age), report_reported_at=Report.reported_at),
            execution_options={"synchronize_session": False},
        )
        count = int(getattr(result, "rowcount", 0) or 0)
        audit.record(
            session,
            Actor.system("runs saved without the review queue's keys"),
            "review.order",
            object_type="incident",
            object_id=incident_id,
            incident_id=incident_id,
            after={"runs": count},
        )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return count


def redecide_for_rules_change(session: Session, incident_id: str) -> int:
    """Store today's decision on every run of the incident decided with other rules, and
    commit, audited as Trace's own ``investigation.redecide``. One indexed probe and
    nothing else when there are none; returns how many runs were decided."""
    if not evidence_store.has_stale_runs(session, incident_id):
        return 0
    session.commit()  # end the read; the write below holds SQLite's lock from its start
    try:
        session.connection(execution_options=WRITE_TRANSACTION)
        count = evidence_store.redecide_stale_runs(session, incident_id)
        if count:
            audit.record(
                session,
                Actor.system("the decision rules changed"),
                "investigation.redecide",
                object_type="incident",
                object_id=incident_id,
                incident_id=incident_id,
                after={"runs": count, "decided_with": decision_version()},
            )
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return count


def card_headline(status: Status, decided_on_shown_run: ReviewValue | None) -> str:
    """What a result card (and the person page) says first: "Needs review" until a person
    decides on the run it shows, then "Reviewed: relay confirmed" (the decision in plain
    words, :data:`trace_app.domain.reviews.REVIEW_WORDS`). A decision made on an earlier
    run does not count: the newer result awaits a decision again. Other statuses say
    their own headline."""
    if status is Status.NEEDS_REVIEW and decided_on_shown_run is not None:
        return reviews.reviewed_headline(decided_on_shown_run)
    return status.headline


def awaiting_result(
    session: Session, report_id: str
) -> tuple[InvestigationRun, InvestigationResult]:
    """The run and result a person may decide on: the report's shown result when it is
    NEEDS_REVIEW. :class:`NotFoundError`, or :class:`ReviewRefusedError` otherwise."""
    if not evidence_store.report_exists(session, report_id):
        raise NotFoundError(f"No report with id {report_id!r}.")
    run = evidence_store.latest_run_for_report(session, report_id)
    if run is None:
        raise ReviewRefusedError(
            "This report has no saved investigation result, so there is nothing to review."
        )
    result = evidence_store.result_from_run(run)
    if result.status is not Status.NEEDS_REVIEW:
        raise ReviewRefusedError(
            f"This report's saved result is {result.status.value}; a person decides only "
            f"{Status.NEEDS_REVIEW.value} results."
        )
    return run, result


def decide(
    session: Session, report_id: str, decision: ReviewValue, note: str, *, actor: Actor
) -> ReviewDecision:
    """Record ``actor``'s decision on the report's NEEDS_REVIEW result and commit.

    Raises :class:`NotFoundError`, :class:`ReviewRefusedError` or ``InvalidInputError`` (a
    blank or overlong note) with nothing written. The saved run is never changed."""
    reviews.clean_note(note)  # refuse a bad note before taking the write lock
    try:
        session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
        run, _result = awaiting_result(session, report_id)
        row = reviews.record_review(session, run, decision, note, actor=actor)
        evidence_store.refresh_awaiting(session, [report_id])
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return row


def assign(
    session: Session, report_id: str, mine: bool, *, actor: Actor
) -> ReviewAssignment | None:
    """ "Assign to me" (``mine``) or release the report's review, and commit: one audit
    row for a change (:func:`trace_app.domain.reviews.assign`), nothing for none."""
    try:
        session.connection(execution_options=WRITE_TRANSACTION)  # SQLite: BEGIN IMMEDIATE
        row = reviews.assign(session, report_id, mine, actor=actor)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return row


def queue_organizations(session: Session, incident_id: str) -> list[tuple[str, str]]:
    """The organisations with a report in the incident, ``(id, name)`` by name: what the
    queue's organisation filter offers (one probe of the reports' index per organisation)."""
    reported = exists().where(
        Report.organization_id == Organization.id, Report.incident_id == incident_id
    )
    rows = session.execute(
        select(Organization.id, Organization.name).where(reported).order_by(Organization.name_key)
    )
    return [(row[0], row[1]) for row in rows]
