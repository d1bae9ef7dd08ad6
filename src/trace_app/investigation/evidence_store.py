"""Reading evidence and saved runs from Trace's store, and saving a run.

The only module of the investigation that touches the database. It reads reports (and,
for the review queue, which runs a person has decided on) and writes ``InvestigationRun``
rows, nothing else: claims, people, alerts and decisions are never written here.

Each run stores its current decision beside what was saved (docs/decisions/0084): the
status, reason and cues under :func:`rules.decision_version`, written when the run is
saved (:func:`save_run`) and made again only when that version changes
(:func:`redecide_stale_runs`). ``awaiting_review`` marks the runs of the review queue; one
statement keeps it (:func:`refresh_awaiting`) whenever a run is saved, decided by a
person or re-decided, so the queue is an indexed read with an exact count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, and_, bindparam, exists, func, or_, select, update
from sqlalchemy.orm import Session, aliased, joinedload

from trace_app.domain.errors import NotFoundError
from trace_app.investigation.attribution_cues import Cue, find_cues
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.outcome import Citation, InvestigationResult, UsageTotals
from trace_app.investigation.rules import (
    RULES_VERSION,
    Conclude,
    decision_version,
    redecide_saved,
)
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.store.models import InvestigationRun, Organization, Report, ReviewDecision
from trace_app.store.types import new_id


class ReportNotFound(NotFoundError):
    code = "report_not_found"


@dataclass(frozen=True, slots=True)
class IncidentEvidence:
    """The chosen report, and the incident's reports from the other sources its text names
    verbatim (``sources``: their names; the only reports a relay can be compared with)."""

    incident_id: str
    chosen: ReportEvidence
    sources: tuple[str, ...]
    named_reports: tuple[ReportEvidence, ...]


_EVIDENCE_COLUMNS = (
    Report.id,
    Organization.name,
    Report.original_text,
    Report.reported_at,
    Report.references,
)


def _evidence(row: Any) -> ReportEvidence:
    report_id, source, text, reported_at, references = row
    return ReportEvidence(
        report_id=report_id,
        source=source,
        text=text or "",
        reported_at=reported_at.isoformat(),
        references=tuple(references or ()),
    )


# Statements are built once with bound parameters: an investigation runs the same few
# queries every time, and building SQL expressions costs more than running them.
_INCIDENT_REPORTS = (
    select(*_EVIDENCE_COLUMNS)
    .join(Organization, Report.organization_id == Organization.id)
    .where(Report.incident_id == bindparam("incident_id"))
    .order_by(Report.position, Report.reported_at, Report.id)
)
_CHOSEN_REPORT = (
    select(Report.incident_id, *_EVIDENCE_COLUMNS)
    .join(Organization, Report.organization_id == Organization.id)
    .where(Report.id == bindparam("report_id"))
)
# "The source's name occurs in the text exactly as written" (case-sensitive) per dialect.
_NAMED_REPORTS = {
    dialect: _INCIDENT_REPORTS.where(
        Organization.name != bindparam("own_source"),
        occurs(bindparam("text", type_=Text), Organization.name) > 0,
    )
    for dialect, occurs in (("postgresql", func.strpos), ("sqlite", func.instr))
}
_RUN_BY_FINGERPRINT = select(InvestigationRun).where(
    InvestigationRun.incident_id == bindparam("incident_id"),
    InvestigationRun.fingerprint == bindparam("fingerprint"),
)


def incident_reports(session: Session, incident_id: str) -> tuple[ReportEvidence, ...]:
    """Every single-source report of the incident, in a stable order (columns only)."""
    rows = session.connection().execute(_INCIDENT_REPORTS, {"incident_id": incident_id})
    return tuple(_evidence(row) for row in rows)


def load_evidence(session: Session, report_id: str) -> IncidentEvidence:
    """Two small queries whatever the incident's size: the chosen report, then the reports
    of the incident's other sources whose name occurs verbatim in its text."""
    connection = session.connection()
    row = connection.execute(_CHOSEN_REPORT, {"report_id": report_id}).first()
    if row is None:
        raise ReportNotFound(f"No report with id {report_id!r}.")
    incident_id = row[0]
    chosen = _evidence(row[1:])
    named_reports: tuple[ReportEvidence, ...] = ()
    if chosen.text:
        query = _NAMED_REPORTS.get(connection.dialect.name, _NAMED_REPORTS["sqlite"])
        params = {"incident_id": incident_id, "own_source": chosen.source, "text": chosen.text}
        named_reports = tuple(_evidence(r) for r in connection.execute(query, params))
    sources = tuple(sorted({r.source for r in named_reports}))
    return IncidentEvidence(incident_id, chosen, sources, named_reports)


def find_run(session: Session, incident_id: str, fingerprint: str) -> InvestigationRun | None:
    return session.scalar(
        _RUN_BY_FINGERPRINT, {"incident_id": incident_id, "fingerprint": fingerprint}
    )


# A report's latest run, the one the result card shows: the newest run time, then the id.
_NEWEST_FIRST = (InvestigationRun.run_at.desc(), InvestigationRun.id.desc())


def latest_run_id(session: Session, report_id: str) -> str | None:
    """The id of :func:`latest_run_for_report`'s run, from the index alone."""
    return session.scalar(
        select(InvestigationRun.id)
        .where(InvestigationRun.report_id == report_id)
        .order_by(*_NEWEST_FIRST)
        .limit(1)
    )


def latest_run_for_report(session: Session, report_id: str) -> InvestigationRun | None:
    return session.scalar(
        select(InvestigationRun)
        .where(InvestigationRun.report_id == report_id)
        .order_by(*_NEWEST_FIRST)
        .limit(1)
    )


# --- stored decisions and the review queue --------------------------------------------

# Runs re-decided, and reports refreshed, per statement batch.
BATCH = 500


def _newer_run_exists() -> Any:
    """A run of the same report shown before this one (:func:`latest_run_for_report`)."""
    newer = aliased(InvestigationRun)
    run = InvestigationRun
    return exists().where(
        newer.report_id == run.report_id,
        or_(newer.run_at > run.run_at, and_(newer.run_at == run.run_at, newer.id > run.id)),
    )


def _awaiting_review(version: str) -> Any:
    """The review queue's rule on one row: decided NEEDS_REVIEW with the current rules, its
    report's latest run, and no person has decided on it."""
    run = InvestigationRun
    decided = exists().where(ReviewDecision.run_id == run.id)
    return and_(
        run.decided_status == Status.NEEDS_REVIEW.value,
        run.decided_version == version,
        ~_newer_run_exists(),
        ~decided,
    )


def refresh_awaiting(session: Session, report_ids: Sequence[str]) -> None:
    """Set ``awaiting_review`` on every run of these reports, by :func:`_awaiting_review`
    (one statement per :data:`BATCH` reports)."""
    ids = sorted(set(report_ids))
    version = decision_version()
    for at in range(0, len(ids), BATCH):
        chunk = ids[at : at + BATCH]
        session.execute(
            update(InvestigationRun)
            .where(InvestigationRun.report_id.in_(chunk))
            .values(awaiting_review=_awaiting_review(version)),
            execution_options={"synchronize_session": False},
        )
    for row in list(session.identity_map.values()):
        if isinstance(row, InvestigationRun) and row.report_id in ids:
            session.expire(row, ["awaiting_review"])


def save_run(session: Session, run: InvestigationRun) -> None:
    """Add a run built by :func:`run_from_result` and keep its report's queue entry.

    The report's row is locked first (PostgreSQL), so two runs of one report saved at once
    are compared one after the other; SQLite's single writer does the same."""
    session.execute(select(Report.id).where(Report.id == run.report_id).with_for_update())
    session.add(run)
    session.flush()
    refresh_awaiting(session, [run.report_id])


def _cues_now(run: InvestigationRun) -> tuple[Cue, ...]:
    """The cues the current lexicons find in the report text the run cited."""
    report_text = next((c["excerpt"] for c in run.citations if c.get("role") == "report"), "")
    return find_cues(report_text)


def _decide(run: InvestigationRun, cues: Sequence[Cue]) -> Conclude:
    """The run's decision under the current rules, from its saved labels (no model)."""
    return redecide_saved(
        Status(run.status), run.reason, run.attribution, run.referenced_source, cues
    )


def _store_decision(run: InvestigationRun, decided: Conclude, cues: Sequence[Cue] | None) -> None:
    """Write ``decided`` as the run's current decision (``cues``: those it read when they
    differ from the saved ``evidence``; ``None`` when the saved ones stand)."""
    run.decided_status = decided.status.value
    run.decided_reason = decided.reason
    run.decided_lowered_by = list(decided.lowered_by)
    run.decided_evidence = None if cues is None else [cue.as_json() for cue in cues]
    run.decided_version = decision_version()


def _stale(incident_id: str, version: str) -> Any:
    """Runs of the incident decided with other rules, or never (two index ranges and a
    NULL probe, not a scan)."""
    column = InvestigationRun.decided_version
    return and_(
        InvestigationRun.incident_id == incident_id,
        or_(column.is_(None), column < version, column > version),
    )


def redecide_stale_runs(session: Session, incident_id: str) -> int:
    """Decide again, with the current rules and cue words, every run of the incident whose
    stored decision was made with others (or not yet made); keep the queue entries of
    their reports. Returns how many runs it decided. The caller audits, holds the write
    transaction and commits."""
    stale = _stale(incident_id, decision_version())
    reports: set[str] = set()
    count = 0
    while batch := session.scalars(select(InvestigationRun).where(stale).limit(BATCH)).all():
        for run in batch:
            cues = _cues_now(run)
            _store_decision(run, _decide(run, cues), cues)
            reports.add(run.report_id)
        session.flush()
        count += len(batch)
    refresh_awaiting(session, sorted(reports))
    return count


def has_stale_runs(session: Session, incident_id: str) -> bool:
    """Whether :func:`redecide_stale_runs` has anything to do: one statement of three
    probes, each a range of the (incident, decided version) index, so that no planner
    reads the incident's runs to find none."""
    version = decision_version()
    column = InvestigationRun.decided_version
    mine = InvestigationRun.incident_id == incident_id
    probes = [
        exists().where(mine, condition)
        for condition in (column.is_(None), column < version, column > version)
    ]
    return bool(session.scalar(select(or_(*probes))))


_AWAITING = (InvestigationRun.incident_id == bindparam("incident_id")) & (
    InvestigationRun.awaiting_review.is_(True)
)


def awaiting_count(session: Session, incident_id: str) -> int:
    """How many runs the incident's review queue holds (an index range count)."""
    query = select(func.count()).select_from(InvestigationRun).where(_AWAITING)
    return int(session.scalar(query, {"incident_id": incident_id}) or 0)


def awaiting_runs(
    session: Session, incident_id: str, *, offset: int, limit: int
) -> list[InvestigationRun]:
    """One page of the incident's review queue, oldest run first (then by the report's
    place in the incident), each run with its report, organisation and person loaded."""
    query = (
        select(InvestigationRun)
        .join(Report, Report.id == InvestigationRun.report_id)
        .where(_AWAITING)
        .options(
            joinedload(InvestigationRun.report).joinedload(Report.organization),
            joinedload(InvestigationRun.report).joinedload(Report.person),
        )
        .order_by(InvestigationRun.run_at, Report.position, InvestigationRun.id)
        .offset(offset)
        .limit(limit)
    )
    return list(session.scalars(query, {"incident_id": incident_id}).unique())


def report_exists(session: Session, report_id: str) -> bool:
    return session.scalar(select(Report.id).where(Report.id == report_id)) is not None


def run_from_result(incident_id: str, result: InvestigationResult) -> InvestigationRun:
    """A new row for a COMPLETED or NEEDS_REVIEW result (anything else is never saved):
    a LIVE check's, or a REPLAYED run re-created from the recorded file. The one place an
    ``InvestigationRun`` is built."""
    if not result.status.saved or result.mode is None or result.fingerprint is None:
        raise ValueError(f"a {result.status} result is not saved")
    assert result.run_at is not None and result.model is not None
    assert result.prompt_version is not None
    run = InvestigationRun(
        id=new_id("inv"),
        incident_id=incident_id,
        report_id=result.report_id,
        status=result.status.value,
        mode=result.mode.value,
        model=result.model,
        prompt_version=result.prompt_version,
        run_at=result.run_at,
        fingerprint=result.fingerprint,
        attribution=result.attribution,
        referenced_source=result.referenced_source,
        support=result.support,
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
        estimated_tokens=result.usage.estimated_tokens,
        usage_source=result.usage.source,
        citations=[c.as_json() for c in result.citations],
        reason=result.reason,
        evidence=[cue.as_json() for cue in result.evidence],
        rules_version=result.rules_version,
    )
    # the saved cues were found just now, with the current lexicons
    if result.rules_version == RULES_VERSION:  # decided just now, by the current rules
        decided = Conclude(result.status, result.reason, result.lowered_by)
    else:  # a recorded run: its labels decided by the current rules
        decided = _decide(run, result.evidence)
    _store_decision(run, decided, None)
    return run


def result_from_run(run: InvestigationRun, *, shown_as: Mode | None = None) -> InvestigationResult:
    """A saved run as a result. A LIVE run shown again is CACHED; REPLAYED stays REPLAYED.

    The run's saved labels are what is reused, with its stored decision when that was made
    with the current rules and cue words (:func:`rules.decision_version`); otherwise the
    decision is made again here, in memory, from the report text the run cited, so an
    older run never shows a status today's rules would not give (the queue's
    :func:`redecide_stale_runs` stores it). No model is asked. The row is never changed.
    """
    stored_mode = Mode(run.mode)
    mode = shown_as or (Mode.CACHED if stored_mode is Mode.LIVE else stored_mode)
    citations = tuple(Citation(**c) for c in run.citations)
    if run.decided_status is not None and run.decided_version == decision_version():
        saved = run.evidence if run.decided_evidence is None else run.decided_evidence
        cues = tuple(Cue.from_json(cue) for cue in saved)
        decided = Conclude(
            Status(run.decided_status),
            run.decided_reason or "",
            tuple(run.decided_lowered_by or ()),
        )
    else:
        cues = _cues_now(run)
        decided = _decide(run, cues)
    return InvestigationResult(
        report_id=run.report_id,
        status=decided.status,
        reason=decided.reason,
        mode=mode,
        attribution=run.attribution,
        referenced_source=run.referenced_source,
        support=run.support,
        model=run.model,
        prompt_version=run.prompt_version,
        run_at=run.run_at,
        usage=UsageTotals(
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
            estimated_tokens=run.estimated_tokens,
            source=run.usage_source,
        ),
        citations=citations,
        fingerprint=run.fingerprint,
        requests_sent=0,
        saved=True,
        evidence=cues,
        rules_version=RULES_VERSION,
        lowered_by=decided.lowered_by,
    )
