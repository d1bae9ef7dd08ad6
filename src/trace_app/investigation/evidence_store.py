"""Reading evidence and saved runs from Trace's store, and saving a run.

The only module of the investigation that touches the database. It reads reports and
writes ``InvestigationRun`` rows, nothing else: claims, people and alerts are never
written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from trace_app.domain.errors import NotFoundError
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.outcome import Citation, InvestigationResult, UsageTotals
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.store.models import InvestigationRun, Report
from trace_app.store.types import new_id


class ReportNotFound(NotFoundError):
    code = "report_not_found"


@dataclass(frozen=True, slots=True)
class IncidentEvidence:
    incident_id: str
    chosen: ReportEvidence
    reports: tuple[ReportEvidence, ...]


def as_evidence(report: Report) -> ReportEvidence:
    return ReportEvidence(
        report_id=report.id,
        source=report.organization.name,
        text=report.original_text or "",
        reported_at=report.reported_at.isoformat(),
        references=tuple(report.references or ()),
    )


def incident_reports(session: Session, incident_id: str) -> tuple[ReportEvidence, ...]:
    """Every single-source report of the incident, in a stable order."""
    rows = session.scalars(
        select(Report)
        .where(Report.incident_id == incident_id)
        .order_by(Report.position, Report.reported_at, Report.id)
        .options(joinedload(Report.organization))
    ).all()
    return tuple(as_evidence(r) for r in rows)


def load_evidence(session: Session, report_id: str) -> IncidentEvidence:
    incident_id = session.scalar(select(Report.incident_id).where(Report.id == report_id))
    if incident_id is None:
        raise ReportNotFound(f"No report with id {report_id!r}.")
    reports = incident_reports(session, incident_id)
    chosen = next(r for r in reports if r.report_id == report_id)
    return IncidentEvidence(incident_id=incident_id, chosen=chosen, reports=reports)


def find_run(session: Session, incident_id: str, fingerprint: str) -> InvestigationRun | None:
    return session.scalar(
        select(InvestigationRun).where(
            InvestigationRun.incident_id == incident_id,
            InvestigationRun.fingerprint == fingerprint,
        )
    )


def latest_run_for_report(session: Session, report_id: str) -> InvestigationRun | None:
    return session.scalar(
        select(InvestigationRun)
        .where(InvestigationRun.report_id == report_id)
        .order_by(InvestigationRun.run_at.desc(), InvestigationRun.id.desc())
        .limit(1)
    )


def report_exists(session: Session, report_id: str) -> bool:
    return session.scalar(select(Report.id).where(Report.id == report_id)) is not None


def run_from_result(incident_id: str, result: InvestigationResult) -> InvestigationRun:
    """A new row for a COMPLETED or NEEDS_REVIEW result (anything else is never saved)."""
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
    )


def result_from_run(run: InvestigationRun, *, shown_as: Mode | None = None) -> InvestigationResult:
    """A saved run as a result. A LIVE run shown again is CACHED; REPLAYED stays REPLAYED."""
    stored_mode = Mode(run.mode)
    mode = shown_as or (Mode.CACHED if stored_mode is Mode.LIVE else stored_mode)
    return InvestigationResult(
        report_id=run.report_id,
        status=Status(run.status),
        reason=run.reason,
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
        citations=tuple(Citation(**c) for c in run.citations),
        fingerprint=run.fingerprint,
        requests_sent=0,
        saved=True,
    )
