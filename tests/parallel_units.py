"""How ``make test`` splits the suite between pytest-xdist workers (``--dist loadgroup``
with the scheduler in tests/conftest.py): a file runs whole on one worker, and so does
every test of an xdist group (the ``localmodel`` tests: one embedded model at a time)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

# The xdist group every ``localmodel`` test joins.
LOCAL_MODEL_GROUP = "localmodel"


def work_unit(nodeid: str) -> str:
    """The scope one worker runs whole: the test's xdist group when it has one (xdist
    appends ``@group`` after any parameter brackets, which may hold an ``@`` of their
    own), else its file."""
    tail = nodeid.rsplit("]", 1)[-1] if "[" in nodeid else nodeid
    if "@" in tail:
        return tail.rsplit("@", 1)[1]
    return nodeid.split("::", 1)[0]


def group_local_model_tests(items: Iterable[Any]) -> None:
    """Put every test that starts the real embedded model in the one xdist group (pytest-xdist's
    worker reads the mark after the collection hooks; a serial run ignores it)."""
    for item in items:
        if item.get_closest_marker("localmodel") is not None:
            item.add_marker(pytest.mark.xdist_group(LOCAL_MODEL_GROUP))
