"""Reset demo as the web app and ``trace reset`` run it: delete every record, seed the
Flood Relief Demo, then re-create the investigation's REPLAYED runs from the recorded
file (:func:`trace_app.investigation.recorded.recreate_replayed_runs`).

All of it happens in the caller's session, so one commit makes the reset visible and a
failure anywhere rolls all of it back. The seed alone is :func:`trace_app.demo.seed.reset_demo`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from trace_app.demo import seed
from trace_app.investigation.recorded import recreate_replayed_runs
from trace_app.settings import TraceSettings
from trace_app.store.models import Incident


def reset(session: Session, settings: TraceSettings) -> Incident:
    """Delete everything, seed the demo, replay the recorded runs. The caller commits."""
    incident = seed.reset_demo(session)
    recreate_replayed_runs(session, settings.recorded_investigations)
    return incident


def seed_if_empty(session: Session, settings: TraceSettings) -> bool:
    """:func:`reset` when the database holds no incident (a demo server's first start);
    True when it seeded."""
    if not seed.is_empty(session):
        return False
    reset(session, settings)
    return True
