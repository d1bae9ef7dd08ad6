"""How ``make test`` splits the suite between pytest-xdist workers (``-n auto --dist
loadfile`` with the scheduler in tests/conftest.py): a file runs whole on one worker, and
every file that starts the real embedded model runs on one worker (one model server at a
time; the session's server is shared).

The scheduler sees node ids only, not marks (and pytest-xdist 3.8's own ``loadgroup``
suffix no longer reaches node ids under pytest 9), so the model's files are named here;
``tests/test_parallel_units.py`` checks that every ``localmodel`` test is among them.
"""

from __future__ import annotations

# The work unit of the tests that start the embedded model.
LOCAL_MODEL_UNIT = "localmodel"
# Where those tests live: a folder (ending in "/") or a file.
LOCAL_MODEL_PATHS = ("tests/integration/", "tests/modelgate/test_local_server.py")


def work_unit(nodeid: str) -> str:
    """The scope one worker runs whole: the embedded model's unit, else the test's file."""
    path = nodeid.split("::", 1)[0]
    if any(path == p or (p.endswith("/") and path.startswith(p)) for p in LOCAL_MODEL_PATHS):
        return LOCAL_MODEL_UNIT
    return path
