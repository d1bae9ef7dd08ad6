"""The work units of a parallel run (see tests/parallel_units.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parallel_units import LOCAL_MODEL_UNIT, work_unit

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("tests/a/test_x.py::test_one", "tests/a/test_x.py"),
        ("tests/a/test_x.py::Case::test_two", "tests/a/test_x.py"),
        ("tests/a/test_x.py::test_p[sqlite]", "tests/a/test_x.py"),
        ("tests/a/test_x.py::test_p[me@example.org]", "tests/a/test_x.py"),
        ("tests/integration/test_m.py::test_live", LOCAL_MODEL_UNIT),
        ("tests/integration/sub/test_m.py::test_live[x]", LOCAL_MODEL_UNIT),
        ("tests/modelgate/test_local_server.py::test_stand_in", LOCAL_MODEL_UNIT),
        (
            "tests/modelgate/test_local_server.py.bak::test_x",
            "tests/modelgate/test_local_server.py.bak",
        ),
        ("tests/integration_other/test_m.py::test_x", "tests/integration_other/test_m.py"),
    ],
)
def test_a_file_or_the_models_files_are_one_unit(nodeid: str, unit: str) -> None:
    assert work_unit(nodeid) == unit


def test_every_localmodel_test_is_in_the_models_unit() -> None:
    """Collected the way ``make test`` collects: a test marked ``localmodel`` outside the
    named paths would start a second model server on the other worker."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "localmodel", "tests"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert ids, collected.stdout[-2000:] + collected.stderr[-2000:]
    assert [i for i in ids if work_unit(i) != LOCAL_MODEL_UNIT] == []
