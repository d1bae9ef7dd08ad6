"""modelgate.atomicfile: whole old file or whole new file, never a torn one or a stray temp."""

from pathlib import Path

import pytest

from modelgate.atomicfile import atomic_write, write_bytes_atomic


def test_write_replaces_the_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "out.json"
    write_bytes_atomic(target, b"first")
    write_bytes_atomic(target, b"second, longer content")
    assert target.read_bytes() == b"second, longer content"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]


def test_a_failing_block_keeps_the_old_file_and_removes_the_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    class Boom(Exception):
        pass

    with pytest.raises(Boom), atomic_write(target) as handle:
        handle.write(b"half of the new")
        raise Boom

    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_failed_first_write_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "never.json"
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write(b"x")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
