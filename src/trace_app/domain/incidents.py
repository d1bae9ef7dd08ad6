"""Creating an incident: what ``trace incident create`` calls on a deployment with no demo.

The name is stored as :func:`~trace_app.domain.text.clean_name` writes names (NFC, one
space); it must be 1 to 200 characters, hold no control characters, and differ, ignoring
case, from every other incident's name.
"""

from __future__ import annotations

import unicodedata

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.domain.errors import InvalidInputError
from trace_app.domain.text import clean_name
from trace_app.store.models import Incident
from trace_app.store.types import new_id, utc_now

MAX_NAME_CHARACTERS = 200
MAX_DESCRIPTION_CHARACTERS = 5000


def _has_control(text: str, allowed: str = "") -> bool:
    return any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in text)


def create_incident(
    session: Session, name: str, description: str = "", *, actor: Actor
) -> Incident:
    """Add an incident (audited as ``incident.create``); raise :class:`InvalidInputError`
    (nothing added) for an empty,
    too long or already used name, or a description that cannot be stored. The caller
    commits."""
    display = clean_name(name)
    if not display:
        raise InvalidInputError("Give the incident a name.")
    if len(display) > MAX_NAME_CHARACTERS or _has_control(display):
        raise InvalidInputError(
            f"An incident name is at most {MAX_NAME_CHARACTERS} characters, "
            "with no control characters."
        )
    text = description.strip()
    if len(text) > MAX_DESCRIPTION_CHARACTERS or _has_control(text, allowed="\n\t"):
        raise InvalidInputError(
            f"A description is at most {MAX_DESCRIPTION_CHARACTERS:,} characters, "
            "with no control characters other than line breaks and tabs."
        )
    # compared in Python: SQLite's lower() folds only ASCII letters, so "È" and "è" would
    # pass a SQL check and then hit the unique index
    wanted = display.casefold()
    names = session.scalars(select(Incident.name))
    if any(name.casefold() == wanted for name in names):
        raise InvalidInputError(f"An incident named {display!r} already exists.")
    incident = Incident(id=new_id("inc"), name=display, description=text, created_at=utc_now())
    session.add(incident)
    session.flush()
    audit.record(
        session,
        actor,
        "incident.create",
        object_type="incident",
        object_id=incident.id,
        incident_id=incident.id,
        after={"name": display},
    )
    return incident
