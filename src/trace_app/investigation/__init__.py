"""Report investigation: how one source report attributes its information.

The model only labels; this package decides, records and never changes claims, people or
alerts. Importing it registers the reset hook that re-creates REPLAYED demo runs.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from trace_app.demo.seed import after_reset_hooks
from trace_app.investigation.recorded import recreate_replayed_runs


def replay_recorded_runs(session: Session) -> None:
    """The after-reset hook: re-create REPLAYED runs whose fingerprint still matches."""
    recreate_replayed_runs(session)


if not any(getattr(h, "__qualname__", "") == "replay_recorded_runs" for h in after_reset_hooks):
    after_reset_hooks.append(replay_recorded_runs)
