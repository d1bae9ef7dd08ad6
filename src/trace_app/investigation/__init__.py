"""Report investigation: how one source report attributes its information.

The model only labels; this package decides, records and never changes claims, people or
alerts. Importing it registers the reset hook that re-creates REPLAYED demo runs.
"""

from __future__ import annotations

from trace_app.demo.seed import after_reset_hooks
from trace_app.investigation.recorded import recreate_replayed_runs

if recreate_replayed_runs not in after_reset_hooks:
    after_reset_hooks.append(recreate_replayed_runs)  # type: ignore[arg-type]
