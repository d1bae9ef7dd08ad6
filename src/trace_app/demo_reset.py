"""Reset demo as the web app and ``trace reset`` run it: delete every record, seed the
Flood Relief Demo, then re-create the investigation's REPLAYED runs from the recorded
file (:func:`trace_app.investigation.recorded.recreate_replayed_runs`).

All of it happens in the caller's session, so one commit makes the reset visible and a
failure anywhere rolls all of it back. The seed alone is :func:`trace_app.demo.seed.reset_demo`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from trace_app.demo import seed
from trace_app.domain import audit
from trace_app.domain.audit import Actor
from trace_app.investigation.recorded import recreate_replayed_runs
from trace_app.settings import TraceSettings
from trace_app.store.models import Incident


def reset(session: Session, settings: TraceSettings, *, actor: Actor) -> Incident:
    """Delete everything, seed the demo, replay the recorded runs (audited as
    ``demo.reset``; the audit trail itself is never deleted). The caller commits."""
    incident = seed.reset_demo(session)
    runs = recreate_replayed_runs(session, settings.recorded_investigations)
    audit.record(
        session,
        actor,
        "demo.reset",
        object_type="incident",
        object_id=incident.id,
        incident_id=incident.id,
        after={"incident": incident.name, "replayed_runs": runs},
    )
    return incident


def seed_if_empty(session: Session, settings: TraceSettings) -> bool:
    """:func:`reset` when the database holds no incident (a demo server's first start);
    True when it seeded."""
    if not seed.is_empty(session):
        return False
    reset(session, settings, actor=Actor.system("demo seed at start-up"))
    return True
