"""Optional parts of Trace that register themselves on import.

``trace_app.investigation`` (when present) appends its reset hook to
``trace_app.demo.seed.after_reset_hooks`` when imported. The app factory and the CLI call
:func:`load_optional_parts` so that a reset from either re-creates the investigation's
REPLAYED runs.
"""

from __future__ import annotations

import importlib

OPTIONAL_PARTS = ("trace_app.investigation",)


def load_optional_parts() -> list[str]:
    """Import each optional part that exists; return the names imported."""
    loaded: list[str] = []
    for name in OPTIONAL_PARTS:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        loaded.append(name)
    return loaded
