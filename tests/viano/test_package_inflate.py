"""Whole large members are inflated in one call (ISA-L when installed) with the checks
zipfile makes: the same bytes, and a typed error for a bad CRC, a damaged stream, or a
member holding more or fewer bytes than it declares."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from viano_helpers import write_package

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages import PackageReader
from viano_bug_analysis.packages import reader as reader_module

NAME = "original/attachments/server.log"


@pytest.fixture(params=["isal", "zlib"])
def inflater(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    module = pytest.importorskip("isal.isal_zlib") if request.param == "isal" else zlib
    monkeypatch.setattr(reader_module, "_FAST_ZLIB", module)
    return str(request.param)


def _log() -> bytes:
    rng = random.Random(4)
    return b"".join(
        f"09:{i % 60:02d} worker {rng.randrange(10**6)} timeout\n".encode() for i in range(40_000)
    )


def _package(tmp_path: Path) -> Path:
    return write_package(tmp_path / "p.zip", {"original/intake.json": b"{}", NAME: _log()})


def test_large_member_reads_the_same_bytes(tmp_path: Path, inflater: str) -> None:
    with PackageReader(_package(tmp_path)) as reader:
        assert reader.size(NAME) >= reader_module.FAST_INFLATE_BYTES
        assert reader.read(NAME) == _log()
        assert b"".join(reader.iter_chunks(NAME)) == _log()  # the streamed path agrees


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("crc", "package.corrupt"),
        ("smaller", "package.corrupt"),  # holds more than it declares: zipfile's CRC fails
        ("larger", "package.size_mismatch"),  # holds fewer
    ],
)
def test_declared_values_are_checked(tmp_path: Path, inflater: str, change: str, code: str) -> None:
    with PackageReader(_package(tmp_path)) as reader:
        info = reader.info(NAME)
        if change == "crc":
            info.CRC ^= 1
        elif change == "smaller":
            info.file_size -= 10
        else:
            info.file_size += 10
        with pytest.raises(PackageError) as caught:
            reader.read(NAME)
        assert caught.value.code == code


def test_damaged_stream_is_corrupt(tmp_path: Path, inflater: str) -> None:
    path = _package(tmp_path)
    with PackageReader(path) as reader:
        info = reader.info(NAME)
        middle = info.header_offset + 200 + info.compress_size // 2
    data = bytearray(path.read_bytes())
    data[middle : middle + 64] = bytes(64)
    path.write_bytes(bytes(data))
    with PackageReader(path) as reader, pytest.raises(PackageError) as caught:
        reader.read(NAME)
    assert caught.value.code in ("package.corrupt", "package.size_mismatch")
