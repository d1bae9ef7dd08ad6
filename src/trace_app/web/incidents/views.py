"""What the incident pages share with other features' pages: the time zones a form offers,
and the incident the menu links to when a page names none (the Audit and Account pages).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import available_timezones

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.requests import Request

from trace_app.accounts.principal import Principal
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE
from trace_app.store.models import Incident
from trace_app.web.deps import database

# The regions of the IANA database a person picks from; the rest (``Etc/GMT+5``,
# ``US/Eastern``, ``posixrules``) are aliases kept for old systems.
REGIONS = (
    "Africa",
    "America",
    "Antarctica",
    "Asia",
    "Atlantic",
    "Australia",
    "Europe",
    "Indian",
    "Pacific",
)


@dataclass(frozen=True, slots=True)
class ZoneChoice:
    value: str  # the IANA name: "Asia/Kathmandu"
    label: str  # what a person reads: "Kathmandu"


@lru_cache(maxsize=1)
def time_zone_choices() -> tuple[tuple[str, tuple[ZoneChoice, ...]], ...]:
    """The zones a form offers, grouped by region and sorted by city; UTC first, alone."""
    grouped: dict[str, list[ZoneChoice]] = {region: [] for region in REGIONS}
    for name in available_timezones():
        region, _, place = name.partition("/")
        if region in grouped and place:
            label = place.replace("_", " ").replace("/", " / ")
            grouped[region].append(ZoneChoice(name, label))
    utc = ("Universal", (ZoneChoice(DEFAULT_TIME_ZONE, "UTC (no local time)"),))
    return (
        utc,
        *(
            (region, tuple(sorted(zones, key=lambda z: z.label)))
            for region, zones in grouped.items()
        ),
    )


def menu_incident(session: Session, principal: Principal | None) -> Incident | None:
    """The incident the menu's People, Reports and Reviews open on a page that names none:
    the first the principal may see, in the Incidents page's order."""
    if principal is None:
        return None
    wanted = select(Incident).order_by(Incident.created_at, Incident.name)
    if not principal.sees_every_incident():
        wanted = wanted.where(Incident.id.in_(sorted(principal.incident_ids())))
    return next((i for i in session.scalars(wanted) if principal.may_see(i.id)), None)


def menu_incident_of(request: Request) -> Incident | None:
    """:func:`menu_incident` for ``base.html`` (a template global: the menu is the same on
    every page, error pages included)."""
    principal = getattr(request.state, "principal", None)
    if principal is None:
        return None
    with database(request).sessions() as session:
        found = menu_incident(session, principal)
        if found is not None:
            session.expunge(found)
        return found
