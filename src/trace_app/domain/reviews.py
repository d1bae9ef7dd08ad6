"""A person's decisions about NEEDS_REVIEW investigation results (docs/decisions/0063).

The values are a closed set (:class:`ReviewValue`). Decisions are appended, never
edited or deleted: each report's decisions are numbered from 1 (``sequence``) and the
highest is the current one (:func:`latest_review`); the earlier ones stay as history.
A decision names the saved run the person looked at and never changes that run.

Which results may be decided is the investigation's rule
(``trace_app.investigation.review_queue``): this module only records and reads.
Nothing here runs a model, and no model output ever becomes a decision.

The queue's **priority** is written here, once (:func:`priority`, docs/trace.md
"Reviews"): a report whose person (or a record linked to it) has an open alert comes
first, then one about a child (under :data:`CHILD_UNDER`) or an older person
(:data:`OLDER_FROM` or more), then the age of the report, oldest first. Who has taken a
review ("assign to me") is stored here too (:func:`assign`), audited like every change.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, bindparam, case, event, func, select
from sqlalchemy.orm import Mapper, Session

from trace_app.domain import audit
from trace_app.domain import text as text_rules
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.store.models import (
    InvestigationRun,
    Person,
    Report,
    ReviewAssignment,
    ReviewDecision,
)
from trace_app.store.types import new_id, utc_now


class ReviewValue(enum.StrEnum):
    """What a person decided about a report's NEEDS_REVIEW result."""

    # a person confirmed the report is first-hand (the PFIF export reads it as
    # author_made_contact): keep this exact value
    FIRST_HAND = "first_hand"
    # a person confirmed the report relays a source, and that the source says so
    RELAY_CONFIRMED = "relay_confirmed"
    # a person judged that the report cannot be relied on
    NOT_RELIABLE = "not_reliable"

    @property
    def meaning(self) -> str:
        return REVIEW_WORDS[self].meaning

    @property
    def label(self) -> str:
        """A few plain words: "relay confirmed" (the headline says "Reviewed: ...")."""
        return REVIEW_WORDS[self].label

    @property
    def sentence(self) -> str:
        """What happened, as a sentence: "A reviewer confirmed the relay"."""
        return REVIEW_WORDS[self].sentence


@dataclass(frozen=True, slots=True)
class ReviewWords:
    """How pages and the API say a decision; its code (``first_hand``) is never shown."""

    label: str
    sentence: str
    meaning: str


# The one place that says each decision in plain words.
REVIEW_WORDS: dict[ReviewValue, ReviewWords] = {
    ReviewValue.FIRST_HAND: ReviewWords(
        label="first-hand confirmed",
        sentence="A reviewer confirmed the report is a first-hand account",
        meaning=(
            "A person confirmed that the report is a first-hand account (for example by "
            "contacting its writer)."
        ),
    ),
    ReviewValue.RELAY_CONFIRMED: ReviewWords(
        label="relay confirmed",
        sentence="A reviewer confirmed the relay",
        meaning=(
            "A person confirmed that the report passes on another source's information, "
            "and that the source says so."
        ),
    ),
    ReviewValue.NOT_RELIABLE: ReviewWords(
        label="not reliable",
        sentence="A reviewer judged the report not reliable",
        meaning=(
            "A person decided that the report cannot be relied on (for example unconfirmed "
            "hearsay, or a source that denies it)."
        ),
    ),
}
REVIEW_MEANINGS: dict[ReviewValue, str] = {value: w.meaning for value, w in REVIEW_WORDS.items()}


def reviewed_headline(decision: ReviewValue) -> str:
    """The result card's headline once a person decided on the result it shows."""
    return f"Reviewed: {decision.label}"


class ReviewRefusedError(InvalidInputError):
    """The report has no result a person can decide on (no saved NEEDS_REVIEW run)."""

    code = "not_awaiting_review"
    http_status = 409


def clean_note(note: str) -> str:
    """The review note as stored (:func:`trace_app.domain.text.clean_note`)."""
    return text_rules.clean_note(note, "Write a note that says how you decided.")


def parse_value(value: str) -> ReviewValue:
    """A decision value from the closed set; :class:`InvalidInputError` otherwise."""
    try:
        return ReviewValue(value)
    except ValueError:
        allowed = ", ".join(v.value for v in ReviewValue)
        raise InvalidInputError(f"Choose a decision: {allowed}.") from None


def record_review(
    session: Session, run: InvestigationRun, decision: ReviewValue, note: str, *, actor: Actor
) -> ReviewDecision:
    """Append ``actor``'s decision (audited as ``review.decide``) about ``run`` (a saved
    run of a report). The caller
    checks that the run may be decided, holds the report's lock and commits.

    The report's row is locked (PostgreSQL) so that two decisions at once get
    consecutive numbers; on SQLite the caller's write transaction does the same.
    """
    text = clean_note(note)
    report = session.get(Report, run.report_id, with_for_update=True)
    if report is None:
        raise NotFoundError(f"No report with id {run.report_id!r}.")
    last = session.scalar(
        select(func.coalesce(func.max(ReviewDecision.sequence), 0)).where(
            ReviewDecision.report_id == report.id
        )
    )
    row = ReviewDecision(
        id=new_id("rev"),
        incident_id=report.incident_id,
        report_id=report.id,
        run_id=run.id,
        sequence=int(last or 0) + 1,
        decision=decision.value,
        note=text,
        decided_at=utc_now(),
        decided_by=actor.name,
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        actor,
        "review.decide",
        object_type="report",
        object_id=report.id,
        incident_id=report.incident_id,
        touched=[f"investigation_run:{run.id}", f"review_decision:{row.id}"],
        before={"status": run.status},
        after={"decision": decision.value, "note": text},
    )
    return row


_LATEST_REVIEW = (
    select(ReviewDecision)
    .where(ReviewDecision.report_id == bindparam("report_id"))
    .order_by(ReviewDecision.sequence.desc())
    .limit(1)
)


def latest_review(session: Session, report_id: str) -> ReviewDecision | None:
    """The report's current decision (its newest), or ``None`` when no person decided.

    A person's decision stays current until a person records another one: a newer
    investigation run of the report puts it back in the queue but does not undo it."""
    return session.scalars(_LATEST_REVIEW, {"report_id": report_id}).first()


def latest_reviews(session: Session, report_ids: Sequence[str]) -> dict[str, ReviewDecision]:
    """The current decision of each of these reports that has one (one statement)."""
    if not report_ids:
        return {}
    newest = (
        select(ReviewDecision.report_id, func.max(ReviewDecision.sequence).label("sequence"))
        .where(ReviewDecision.report_id.in_(list(report_ids)))
        .group_by(ReviewDecision.report_id)
        .subquery()
    )
    rows = session.scalars(
        select(ReviewDecision).join(
            newest,
            (ReviewDecision.report_id == newest.c.report_id)
            & (ReviewDecision.sequence == newest.c.sequence),
        )
    )
    return {row.report_id: row for row in rows}


def review_history(
    session: Session, report_id: str, *, offset: int = 0, limit: int = 100
) -> tuple[list[ReviewDecision], int]:
    """The report's decisions, newest first, and how many there are."""
    mine = ReviewDecision.report_id == report_id
    total = session.scalar(select(func.count()).select_from(ReviewDecision).where(mine))
    rows = session.scalars(
        select(ReviewDecision)
        .where(ReviewDecision.report_id == report_id)
        .order_by(ReviewDecision.sequence.desc())
        .offset(offset)
        .limit(limit)
    ).all()
    return list(rows), int(total or 0)


def recent_decisions(
    session: Session, incident_id: str, *, limit: int = 10
) -> list[tuple[ReviewDecision, str]]:
    """The incident's newest decisions with their report's summary, newest first, for the
    Reviews page's "Recently decided" list (one statement)."""
    rows = session.execute(
        select(ReviewDecision, Report.summary)
        .join(Report, Report.id == ReviewDecision.report_id)
        .where(ReviewDecision.incident_id == incident_id)
        .order_by(ReviewDecision.decided_at.desc(), ReviewDecision.id.desc())
        .limit(limit)
    )
    return [(row[0], row[1]) for row in rows]


# --- the queue's priority: the rule, once -----------------------------------------------

# a child: younger than this; an older person: this age or more (the age the report gives,
# else the age on the person's record; no age known counts as neither)
CHILD_UNDER = 18
OLDER_FROM = 60
# review_rank: the stored part of the priority (the open alert is read when the queue is)
CHILD_OR_OLDER_RANK = 0
OTHER_RANK = 1


class Priority(enum.IntEnum):
    """Where a report stands in the review queue: lower comes first; within one, the
    oldest report first (its reported time)."""

    ALERT_CHILD_OR_OLDER = 0
    OPEN_ALERT = 1
    CHILD_OR_OLDER = 2
    OTHER = 3

    @property
    def words(self) -> str:
        """What the Reviews page says about it ("" for the ordinary case)."""
        return PRIORITY_WORDS[self]


PRIORITY_WORDS: dict[Priority, str] = {
    Priority.ALERT_CHILD_OR_OLDER: "Open alert · child or older person",
    Priority.OPEN_ALERT: "Open alert",
    Priority.CHILD_OR_OLDER: "Child or older person",
    Priority.OTHER: "",
}


def child_or_older(age: int | None) -> bool:
    return age is not None and (age < CHILD_UNDER or age >= OLDER_FROM)


def age_rank(age: int | None) -> int:
    """The stored part of the priority (``investigation_runs.review_rank``)."""
    return CHILD_OR_OLDER_RANK if child_or_older(age) else OTHER_RANK


def age_rank_sql(age: ColumnElement[Any]) -> ColumnElement[int]:
    """:func:`age_rank` as SQL, for setting the stored rank of many runs in one statement."""
    return case(((age < CHILD_UNDER) | (age >= OLDER_FROM), CHILD_OR_OLDER_RANK), else_=OTHER_RANK)


def priority(open_alert: bool, rank: int | None) -> Priority:
    """The rule: an open alert first, then a child or an older person, then the rest."""
    vulnerable = rank == CHILD_OR_OLDER_RANK
    if open_alert:
        return Priority.ALERT_CHILD_OR_OLDER if vulnerable else Priority.OPEN_ALERT
    return Priority.CHILD_OR_OLDER if vulnerable else Priority.OTHER


def reported_age(session_or_connection: Session | Connection, report_id: str) -> Any:
    """The report's reported time and the age that ranks it (one statement)."""
    return session_or_connection.execute(
        select(Report.reported_at, func.coalesce(Report.person_age, Person.age))
        .join(Person, Person.id == Report.person_id)
        .where(Report.id == report_id)
    ).first()


def _queue_keys(_mapper: Mapper[Any], connection: Connection, run: InvestigationRun) -> None:
    """Give a run being saved its queue keys from its report (both never change). A
    process that never imported this module saves NULL keys; the queue's next read sets
    them (``review_queue.set_queue_keys``)."""
    if run.review_rank is not None or not run.report_id:
        return
    found = reported_age(connection, run.report_id)
    if found is not None:
        run.report_reported_at = found[0]
        run.review_rank = age_rank(found[1])


event.listen(InvestigationRun, "before_insert", _queue_keys)


# --- who has taken a review --------------------------------------------------------------


def assignments(session: Session, report_ids: Sequence[str]) -> dict[str, ReviewAssignment]:
    """The current assignment of each of these reports that has one (one statement)."""
    if not report_ids:
        return {}
    rows = session.scalars(
        select(ReviewAssignment).where(ReviewAssignment.report_id.in_(list(report_ids)))
    )
    return {row.report_id: row for row in rows}


def assign(
    session: Session, report_id: str, mine: bool, *, actor: Actor
) -> ReviewAssignment | None:
    """Take the report's review (``mine``), from whoever held it, or release it: one
    audit row (``review.assign``) for a change, none when nothing changes. Returns the
    assignment now (None: nobody). The caller commits."""
    report = session.get(Report, report_id, with_for_update=True)
    if report is None:
        raise NotFoundError(f"No report with id {report_id!r}.")
    row = session.get(ReviewAssignment, report_id)
    before = row.assigned_to if row is not None else None
    after = actor.name if mine else None
    if before == after:
        return row
    if row is not None:
        session.delete(row)
        session.flush()
    row = None
    if after is not None:
        row = ReviewAssignment(
            report_id=report.id,
            incident_id=report.incident_id,
            assigned_to=after,
            assigned_at=utc_now(),
        )
        session.add(row)
        session.flush()
    audit.record(
        session,
        actor,
        "review.assign",
        object_type="report",
        object_id=report.id,
        incident_id=report.incident_id,
        before={"assigned_to": before},
        after={"assigned_to": after},
    )
    return row
