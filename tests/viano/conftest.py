from __future__ import annotations

from pathlib import Path

import pytest

from viano_bug_analysis.packages import PackageStore


@pytest.fixture
def store(tmp_path: Path) -> PackageStore:
    return PackageStore.init(tmp_path / "store")
