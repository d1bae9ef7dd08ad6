"""Find the real data folder the same way tests/conftest.py's fixture does (for
module-scoped fixtures, which cannot use the function-scoped one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def real_data() -> Path:
    configured = os.environ.get("REAL_DATA_DIR")
    path = Path(configured) if configured else REPO.parent / "shared" / "data"
    if not (path / "bug_reports").is_dir():
        pytest.skip(f"real data folder {path} is absent (set REAL_DATA_DIR)")
    return path
