"""Damaged packages: any byte-level damage gives a typed error or a valid package."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from viano_helpers import intake_package

from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.errors import VianoError
from viano_bug_analysis.packages import PackageStore


@pytest.fixture(scope="module")
def valid_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return intake_package(tmp_path_factory.mktemp("fuzz") / "p.zip").read_bytes()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=6
    ),
    truncate=st.one_of(st.none(), st.integers(min_value=0)),
)
def test_damaged_package_is_refused_with_a_code_or_accepted_whole(
    tmp_path_factory: pytest.TempPathFactory,
    valid_bytes: bytes,
    edits: list[tuple[int, int]],
    truncate: int | None,
) -> None:
    data = bytearray(valid_bytes)
    for pos, value in edits:
        data[pos % len(data)] = value
    if truncate is not None:
        data = data[: truncate % (len(data) + 1)]
    tmp = tmp_path_factory.mktemp("case")
    path: Path = tmp / "damaged.zip"
    path.write_bytes(bytes(data))
    store = PackageStore.init(tmp / "s")
    try:
        gen, _ = store.add(path)
    except VianoError as exc:
        assert exc.code.split(".")[0] in ("package", "store")
        assert store.list_packages() == []
        return
    try:
        CaseBuilder(store).build(gen.case_id, gen.package_id)
    except VianoError as exc:
        assert exc.code.split(".")[0] in ("package", "intake", "case", "limit")
        assert store.generations(gen.case_id, gen.package_id) == [gen.generation]
