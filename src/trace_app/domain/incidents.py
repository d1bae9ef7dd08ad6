"""Creating an incident (what ``trace incident create`` calls on a deployment with no
demo) and setting its time zone.

The name is stored as :func:`~trace_app.domain.text.clean_name` writes names (NFC, one
space); it must be 1 to 200 characters, hold no control characters, and differ, ignoring
case, from every other incident's name. Its time zone is an IANA name, ``UTC`` unless
given (:mod:`trace_app.domain.time_zones`).
"""

from __future__ import annotations

import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.text import clean_name
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE, check_time_zone
from trace_app.store.models import Incident
from trace_app.store.types import new_id, utc_now

MAX_NAME_CHARACTERS = 200
MAX_DESCRIPTION_CHARACTERS = 5000


class IncidentInputError(InvalidInputError):
    """A value of a new incident or its time zone that cannot be kept; ``field`` names it
    (``name``, ``description`` or ``time_zone``) for a form to show the message beside."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def _zone(time_zone: str) -> str:
    try:
        return check_time_zone(time_zone)
    except InvalidInputError as exc:
        raise IncidentInputError(str(exc), field="time_zone") from exc


def _has_control(text: str, allowed: str = "") -> bool:
    return any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in text)


def incident_named(session: Session, name: str) -> Incident | None:
    """The incident whose name is ``name`` in any case (names are unique that way)."""
    # compared in Python: SQLite's lower() folds only ASCII letters, so "È" and "è" would
    # pass a SQL check and then hit the unique index
    wanted = clean_name(name).casefold()
    return next((i for i in session.scalars(select(Incident)) if i.name.casefold() == wanted), None)


def create_incident(
    session: Session,
    name: str,
    description: str = "",
    *,
    time_zone: str = DEFAULT_TIME_ZONE,
    actor: Actor,
) -> Incident:
    """Add an incident (audited as ``incident.create``); raise :class:`IncidentInputError`
    (nothing added, its ``field`` named) for an empty, too long or already used name, a
    description that cannot be stored, or a time zone :mod:`zoneinfo` does not know. The
    caller commits."""
    zone = _zone(time_zone)
    display = clean_name(name)
    if not display:
        raise IncidentInputError("Give the incident a name.", field="name")
    if len(display) > MAX_NAME_CHARACTERS or _has_control(display):
        raise IncidentInputError(
            f"An incident name is at most {MAX_NAME_CHARACTERS} characters, "
            "with no control characters.",
            field="name",
        )
    text = description.strip()
    if len(text) > MAX_DESCRIPTION_CHARACTERS or _has_control(text, allowed="\n\t"):
        raise IncidentInputError(
            f"A description is at most {MAX_DESCRIPTION_CHARACTERS:,} characters, "
            "with no control characters other than line breaks and tabs.",
            field="description",
        )
    if incident_named(session, display) is not None:
        raise IncidentInputError(f"An incident named {display!r} already exists.", field="name")
    incident = Incident(
        id=new_id("inc"), name=display, description=text, created_at=utc_now(), time_zone=zone
    )
    session.add(incident)
    session.flush()
    audit.record(
        session,
        actor,
        "incident.create",
        object_type="incident",
        object_id=incident.id,
        incident_id=incident.id,
        after={"name": display, "time_zone": zone},
    )
    return incident


def set_time_zone(session: Session, incident_id: str, time_zone: str, *, actor: Actor) -> Incident:
    """Set the incident's time zone (audited as ``incident.time_zone``, before and after).

    Raises :class:`NotFoundError` for an unknown incident and :class:`InvalidInputError`
    for a zone :mod:`zoneinfo` does not know; nothing changes then. Stored times stay UTC:
    only how pages show them changes. The caller commits."""
    zone = _zone(time_zone)
    incident = session.get(Incident, incident_id)
    if incident is None:
        raise NotFoundError(f"No incident with id {incident_id!r}.")
    before = incident.time_zone
    incident.time_zone = zone
    session.flush()
    audit.record(
        session,
        actor,
        "incident.time_zone",
        object_type="incident",
        object_id=incident.id,
        incident_id=incident.id,
        before={"time_zone": before},
        after={"time_zone": zone},
    )
    return incident
