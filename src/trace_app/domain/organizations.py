"""Which organisations work in which incident: the one rule for acting as one.

An organisation works in an incident when a member of that incident (or of every
incident) acts for it, or when a report of that incident comes from it. A name that no
member acts for and no report comes from, anywhere, is new: whoever names it first in an
incident brings it into that incident.

So a coordinator of one incident cannot take on, for themselves or a member, an
organisation that works only in other incidents, and an import cannot publish under one
(PFIF ``author_name``, a shelter list's source): each would be publishing in someone
else's name (issue 38). An admin of every incident places members of any organisation.
"""

from __future__ import annotations

from sqlalchemy import exists, or_, select
from sqlalchemy.orm import Session

from trace_app.domain.errors import InvalidReportError
from trace_app.domain.text import clean_name, name_key
from trace_app.store.account_models import EVERY_INCIDENT, Membership
from trace_app.store.models import Organization, Report


def _named(session: Session, name: str) -> Organization | None:
    key = name_key(clean_name(name))
    return session.scalars(select(Organization).where(Organization.name_key == key)).first()


def works_in(session: Session, organization_id: str, incident_id: str) -> bool:
    member = exists().where(
        Membership.organization_id == organization_id,
        or_(Membership.scope == incident_id, Membership.scope == EVERY_INCIDENT),
    )
    reported = exists().where(
        Report.organization_id == organization_id, Report.incident_id == incident_id
    )
    return bool(session.scalar(select(or_(member, reported))))


def is_new(session: Session, organization_id: str) -> bool:
    used = or_(
        exists().where(Membership.organization_id == organization_id),
        exists().where(Report.organization_id == organization_id),
    )
    return not session.scalar(select(used))


def may_act_in(session: Session, name: str, incident_id: str) -> bool:
    """May someone act for the organisation called ``name`` in ``incident_id``?"""
    organization = _named(session, name)
    if organization is None:
        return True
    return works_in(session, organization.id, incident_id) or is_new(session, organization.id)


def refusal(name: str) -> str:
    return (
        f"{clean_name(name)} works in other incidents, not this one: name your own "
        "organisation, or ask an admin to add a member of it to this incident."
    )


def require_may_act_in(session: Session, name: str, incident_id: str) -> None:
    """Raises :class:`InvalidReportError` (field ``source``) when :func:`may_act_in` says no."""
    if not may_act_in(session, name, incident_id):
        raise InvalidReportError(refusal(name), fields=("source",))


def working_in(session: Session, incident_id: str) -> list[str]:
    """The names of the organisations that work in ``incident_id`` (:func:`works_in`), by
    name: what an incident's filters and forms offer."""
    member = exists().where(
        Membership.organization_id == Organization.id,
        or_(Membership.scope == incident_id, Membership.scope == EVERY_INCIDENT),
    )
    reported = exists().where(
        Report.organization_id == Organization.id, Report.incident_id == incident_id
    )
    rows = session.scalars(
        select(Organization.name).where(or_(member, reported)).order_by(Organization.name_key)
    )
    return list(rows)
