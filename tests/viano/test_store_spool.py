"""Publication assembles small generations in memory (``Spool``) and readers parse small
package files from memory: the bytes and what is read are those of the plain file path."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from viano_helpers import members, write_package

from viano_bug_analysis.packages import PackageReader, PackageWriter
from viano_bug_analysis.packages import reader as reader_module
from viano_bug_analysis.packages.spool import Spool


def _writer(base: Path, tmp_path: Path) -> tuple[PackageReader, PackageWriter]:
    reader = PackageReader(base)
    writer = PackageWriter(reader)
    rng = random.Random(5)
    writer.add_bytes("analysis/extra/small.json", b'{"a": 1}')
    writer.add_bytes("analysis/extra/noise.bin", rng.randbytes(40_000), compress=False)
    big = tmp_path / "streamed.txt"  # added from a file: zipfile seeks back over its header
    big.write_bytes(b"line of a log\n" * 20_000)
    writer.add_file("analysis/extra/streamed.txt", big)
    return reader, writer


@pytest.mark.parametrize("limit", [0, 1, 512, 30_000, 100_000, 1 << 30])
def test_spooled_output_is_byte_identical_to_a_plain_file(tmp_path: Path, limit: int) -> None:
    base = write_package(tmp_path / "g1.zip", {"original/intake.json": b"{}"})
    reader, writer = _writer(base, tmp_path)
    with reader:
        plain = io.BytesIO()
        writer.write(plain)
        target = tmp_path / f"spooled-{limit}.zip"
        with open(target, "xb") as f:
            spool = Spool(f, limit)
            writer.write(spool)  # type: ignore[arg-type]
            spool.finish()
    assert target.read_bytes() == plain.getvalue()
    assert members(target)["analysis/extra/streamed.txt"] == b"line of a log\n" * 20_000


def test_small_and_large_package_files_read_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = write_package(
        tmp_path / "g1.zip",
        {"original/intake.json": b"{}", "vendor/blob.bin": random.Random(1).randbytes(50_000)},
    )
    with PackageReader(base) as in_memory:
        assert isinstance(in_memory.raw_zip().fp, io.BytesIO)  # small: parsed from memory
        seen = {name: in_memory.read(name) for name in in_memory.files()}
        manifest = in_memory.require_manifest()
    monkeypatch.setattr(reader_module, "SMALL_PACKAGE_BYTES", 1000)
    with PackageReader(base) as streamed:
        assert not isinstance(streamed.raw_zip().fp, io.BytesIO)  # large: read from the file
        assert {name: streamed.read(name) for name in streamed.files()} == seen
        assert streamed.require_manifest() == manifest


@pytest.mark.parametrize("extra_bytes", [10, 3 << 20])  # assembled in memory / spilled
def test_published_hash_and_size_are_those_of_the_file(tmp_path: Path, extra_bytes: int) -> None:
    import hashlib

    from viano_bug_analysis.packages import PackageStore

    store = PackageStore.init(tmp_path / "store")
    store.add(write_package(tmp_path / "g1.zip", {"original/intake.json": b"{}"}))
    with store.lock("demo-case", "supplied") as op:
        generation, reader = op.open_current()
        with reader:
            writer = PackageWriter(reader)
            writer.add_bytes("vendor/blob.bin", random.Random(2).randbytes(extra_bytes))
            published = op.publish(writer)
    data = published.path.read_bytes()
    assert published.generation == generation.generation + 1
    assert (published.sha256, published.size) == (hashlib.sha256(data).hexdigest(), len(data))
    again = store.current("demo-case", "supplied")  # as the index recorded it
    assert (again.sha256, again.size) == (published.sha256, published.size)
