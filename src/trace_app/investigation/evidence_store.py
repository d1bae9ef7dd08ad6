"""Reading evidence and saved runs from Trace's store, and saving a run.

The only module of the investigation that touches the database. It reads reports (and,
for the review queue, which runs a person has decided on) and writes ``InvestigationRun``
rows, nothing else: claims, people, alerts and decisions are never written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, bindparam, func, select
from sqlalchemy.orm import Session, joinedload

from trace_app.domain.errors import NotFoundError
from trace_app.investigation.attribution_cues import find_cues
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.outcome import Citation, InvestigationResult, UsageTotals
from trace_app.investigation.rules import RULES_VERSION, redecide_saved
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


def latest_run_for_report(session: Session, report_id: str) -> InvestigationRun | None:
    return session.scalar(
        select(InvestigationRun)
        .where(InvestigationRun.report_id == report_id)
        .order_by(*_NEWEST_FIRST)
        .limit(1)
    )


def undecided_latest_runs(session: Session, incident_id: str) -> list[InvestigationRun]:
    """The latest run of each of the incident's reports (the run its card shows, picked as
    :func:`latest_run_for_report` picks it) on which no person has recorded a decision,
    oldest run first (then by the report's place in the incident). Runs with their
    report, its organisation and person loaded; two statements."""
    ranked = (
        select(
            InvestigationRun.id,
            func.row_number()
            .over(partition_by=InvestigationRun.report_id, order_by=_NEWEST_FIRST)
            .label("rank"),
        )
        .where(InvestigationRun.incident_id == incident_id)
        .subquery()
    )
    decided = select(ReviewDecision.id).where(ReviewDecision.run_id == InvestigationRun.id)
    query = (
        select(InvestigationRun)
        .join(ranked, (ranked.c.id == InvestigationRun.id) & (ranked.c.rank == 1))
        .join(Report, Report.id == InvestigationRun.report_id)
        .where(~decided.exists())
        .options(
            joinedload(InvestigationRun.report).joinedload(Report.organization),
            joinedload(InvestigationRun.report).joinedload(Report.person),
        )
        .order_by(InvestigationRun.run_at, Report.position, InvestigationRun.id)
    )
    return list(session.scalars(query).unique())


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
    return InvestigationRun(
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


def result_from_run(run: InvestigationRun, *, shown_as: Mode | None = None) -> InvestigationResult:
    """A saved run as a result. A LIVE run shown again is CACHED; REPLAYED stays REPLAYED.

    The run's saved labels are what is reused; the decision is made again with the current
    rules (``rules.redecide_saved``) and the current cue lexicons, read from the report
    text the run cited, so an older run never shows a status today's rules would not give.
    No model is asked. The row itself is never changed.
    """
    stored_mode = Mode(run.mode)
    mode = shown_as or (Mode.CACHED if stored_mode is Mode.LIVE else stored_mode)
    citations = tuple(Citation(**c) for c in run.citations)
    report_text = next((c.excerpt for c in citations if c.role == "report"), "")
    cues = find_cues(report_text)
    decided = redecide_saved(
        Status(run.status), run.reason, run.attribution, run.referenced_source, cues
    )
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
