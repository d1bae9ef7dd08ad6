"""The work units of a parallel run (see tests/parallel_units.py)."""

from __future__ import annotations

import pytest

from parallel_units import LOCAL_MODEL_GROUP, group_local_model_tests, work_unit


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("tests/a/test_x.py::test_one", "tests/a/test_x.py"),
        ("tests/a/test_x.py::Case::test_two", "tests/a/test_x.py"),
        ("tests/a/test_x.py::test_p[sqlite]", "tests/a/test_x.py"),
        ("tests/a/test_x.py::test_p[me@example.org]", "tests/a/test_x.py"),
        ("tests/i/test_m.py::test_live@localmodel", "localmodel"),
        ("tests/i/test_m.py::test_live[a@b]@localmodel", "localmodel"),
    ],
)
def test_a_file_or_its_group_is_one_unit(nodeid: str, unit: str) -> None:
    assert work_unit(nodeid) == unit


class Item:
    """Just what the grouping reads and writes of a pytest item."""

    def __init__(self, *marks: pytest.MarkDecorator) -> None:
        self.marks = [m.mark for m in marks]

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.marks.append(marker.mark)


def test_localmodel_tests_and_only_they_join_one_group() -> None:
    live, plain = Item(pytest.mark.localmodel, pytest.mark.timeout(60)), Item()
    group_local_model_tests([live, plain])
    group = live.get_closest_marker("xdist_group")
    assert group is not None and group.args == (LOCAL_MODEL_GROUP,)
    assert plain.get_closest_marker("xdist_group") is None
