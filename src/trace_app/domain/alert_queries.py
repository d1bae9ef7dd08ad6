"""Read-side functions for alerts: one per person, a joined missing report counted as
another source of it, never as an alert of its own; a fixed number of statements each.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from trace_app.domain.claim_source import joined_to_source
from trace_app.domain.errors import NotFoundError
from trace_app.domain.queries import Page, clamp_limit
from trace_app.store.models import (
    Alert,
    AlertState,
    Claim,
    Organization,
    Person,
)

OPEN_ALERTS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class AlertListing:
    id: str
    state: str
    raised_at: datetime
    person_id: str
    person_name: str
    claim_id: str
    report_id: str
    source: str
    closed_at: datetime | None = None
    closed_by_claim_id: str | None = None
    close_note: str | None = None
    closed_by: str | None = None  # the account that closed it by hand
    close_reason: str | None = None  # duplicate or withdrawn (closed by hand)
    reopened_by: str | None = None
    reopen_note: str | None = None
    # the other missing reports that joined this alert: their sources
    other_sources: tuple[str, ...] = ()


_ALERTS_IN_STATE = (
    Alert.incident_id == bindparam("incident_id"),
    Alert.state == bindparam("state"),
    Alert.joined_alert_id.is_(None),
)


_COUNT_ALERTS = select(func.count()).select_from(Alert).where(*_ALERTS_IN_STATE)


_ALERT_COLUMNS = joined_to_source(
    select(
        Alert.id,
        Alert.state,
        Alert.raised_at,
        Alert.person_id,
        Person.name.label("person_name"),
        Alert.claim_id,
        Claim.report_id,
        Organization.name.label("source"),
        Alert.closed_at,
        Alert.closed_by_claim_id,
        Alert.close_note,
        Alert.closed_by,
        Alert.close_reason,
        Alert.reopened_by,
        Alert.reopen_note,
    )
    .join(Person, Person.id == Alert.person_id)
    .join(Claim, Claim.id == Alert.claim_id)
)


_JOINED_SOURCES = (
    joined_to_source(
        select(Alert.joined_alert_id, Organization.name).join(Claim, Claim.id == Alert.claim_id)
    )
    .where(Alert.joined_alert_id.in_(bindparam("alert_ids", expanding=True)))
    .order_by(Alert.position, Alert.id)
)


_ALERT_ROWS = (
    _ALERT_COLUMNS.where(*_ALERTS_IN_STATE)
    .order_by(Alert.position.desc(), Alert.id.desc())
    .offset(bindparam("offset"))
    .limit(bindparam("limit"))
)


def alerts_page(
    session: Session,
    incident_id: str,
    *,
    state: AlertState = AlertState.OPEN,
    offset: int = 0,
    limit: int = OPEN_ALERTS_SHOWN,
) -> Page[AlertListing]:
    """The incident's alerts in one state, newest first, with person and source (and,
    for closed ones, what closed them): two statements."""
    limit = clamp_limit(limit, OPEN_ALERTS_SHOWN)
    offset = max(0, offset)
    params = {"incident_id": incident_id, "state": state.value}
    total = session.scalar(_COUNT_ALERTS, params)
    rows = session.execute(_ALERT_ROWS, {**params, "offset": offset, "limit": limit})
    alerts = _with_sources(session, [AlertListing(*row) for row in rows])
    return Page(items=alerts, total=total or 0, offset=offset, limit=limit)


def _with_sources(session: Session, alerts: list[AlertListing]) -> list[AlertListing]:
    """Each alert with the sources of the missing reports that joined it: one statement."""
    if not alerts:
        return alerts
    joined: dict[str, list[str]] = {}
    for alert_id, source in session.execute(_JOINED_SOURCES, {"alert_ids": [a.id for a in alerts]}):
        joined.setdefault(str(alert_id), []).append(source)
    return [replace(a, other_sources=tuple(joined[a.id])) if a.id in joined else a for a in alerts]


def open_alerts(
    session: Session, incident_id: str, *, limit: int = OPEN_ALERTS_SHOWN
) -> Page[AlertListing]:
    """The newest open alerts of the incident, with person and source: two statements."""
    return alerts_page(session, incident_id, state=AlertState.OPEN, limit=limit)


def get_alert(session: Session, alert_id: str) -> AlertListing:
    """One alert with its person and source."""
    row = session.execute(
        _ALERT_COLUMNS.where(Alert.id == bindparam("alert_id")), {"alert_id": alert_id}
    ).first()
    if row is None:
        raise NotFoundError(f"No alert with id {alert_id!r}.")
    return _with_sources(session, [AlertListing(*row)])[0]


def person_alerts(session: Session, person_ids: list[str]) -> list[AlertListing]:
    """Every alert of one person (all the records of its group), newest first, with its
    sources; the missing reports that joined an alert are among its sources, not listed
    as alerts: two statements."""
    rows = session.execute(
        _ALERT_COLUMNS.where(
            Alert.person_id.in_(bindparam("person_ids", expanding=True)),
            Alert.joined_alert_id.is_(None),
        ).order_by(Alert.position.desc(), Alert.id.desc()),
        {"person_ids": person_ids},
    )
    return _with_sources(session, [AlertListing(*row) for row in rows])


def open_alerts_of(
    session: Session,
    incident_id: str,
    person_ids: Collection[str],
    *,
    limit: int = OPEN_ALERTS_SHOWN,
) -> Page[AlertListing]:
    """The newest open alerts of the incident about the given people (the People page's
    alerts filtered by its search): the incident's open alerts are read as ids (one
    narrow statement), then the shown ones in full."""
    limit = clamp_limit(limit, OPEN_ALERTS_SHOWN)
    wanted = set(person_ids)
    rows = session.execute(
        select(Alert.id, Alert.person_id)
        .where(*_ALERTS_IN_STATE)
        .order_by(Alert.position.desc(), Alert.id.desc()),
        {"incident_id": incident_id, "state": AlertState.OPEN.value},
    ).all()
    matching = [alert_id for alert_id, person_id in rows if person_id in wanted]
    shown = matching[:limit]
    found: dict[str, AlertListing] = {}
    if shown:
        for row in session.execute(_ALERT_COLUMNS.where(Alert.id.in_(shown))):
            found[row.id] = AlertListing(*row)
    return Page(items=[found[a] for a in shown], total=len(matching), offset=0, limit=limit)
