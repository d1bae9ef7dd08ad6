"""Where `viano demo` and `viano eval` find the real public data (``REAL_DATA_DIR``, else
``../shared/data`` next to the current folder). Kept apart from ``demo`` so that the
evaluation reads it without importing the command-line modules."""

from __future__ import annotations

import os
from pathlib import Path

from viano_bug_analysis.errors import VianoError


class DemoError(VianoError):
    """The demo cannot run: no real data, no such bug, or no model to ask."""

    code = "demo.unavailable"


def real_data_dir() -> Path:
    configured = os.environ.get("REAL_DATA_DIR", "").strip()
    path = Path(configured) if configured else Path.cwd().parent / "shared" / "data"
    if not path.is_dir():
        raise DemoError(
            f"real data folder {path} not found: set REAL_DATA_DIR or run from a checkout "
            "next to shared/data"
        )
    return path
