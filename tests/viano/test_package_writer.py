"""PackageWriter rules and byte preservation across generations."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from viano_helpers import members, write_package

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages import PackageReader, PackageWriter


def _next(path: Path, out: Path, **adds: bytes) -> Path:
    with PackageReader(path) as reader:
        writer = PackageWriter(reader)
        for name, data in adds.items():
            writer.add_bytes(name.replace("__", "/"), data)
        with open(out, "wb") as f:
            writer.write(f)
    return out


def test_next_generation_copies_members_and_advances(tmp_path: Path) -> None:
    p1 = write_package(
        tmp_path / "g1.zip", {"original/intake.json": b"{}", "vendor/notes.bin": bytes(range(256))}
    )
    p2 = _next(p1, tmp_path / "g2.zip", analysis__revisions__0001__x=b"1")
    with zipfile.ZipFile(p2) as z:
        assert z.testzip() is None  # every CRC checks
    before, after = members(p1), members(p2)
    for name in ("original/intake.json", "vendor/notes.bin"):
        assert after[name] == before[name]
    with PackageReader(p2) as r:
        m = r.require_manifest()
        assert m.package_generation == 2
        assert (m.case_id, m.package_id) == ("demo-case", "supplied")


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("original/new.txt", "package.frozen_member"),
        ("vendor/notes.bin", "package.frozen_member"),
        ("manifest.json", "package.frozen_member"),
        ("analysis/revisions/0001/late.json", "package.frozen_namespace"),
        ("../escape", "package.path_traversal"),
        ("/abs", "package.absolute_path"),
    ],
)
def test_writer_refuses(tmp_path: Path, name: str, code: str) -> None:
    p1 = write_package(
        tmp_path / "g1.zip", {"original/intake.json": b"{}", "vendor/notes.bin": b"n"}
    )
    p2 = _next(p1, tmp_path / "g2.zip", analysis__revisions__0001__x=b"1")
    with PackageReader(p2) as reader:
        writer = PackageWriter(reader)
        with pytest.raises(PackageError) as info:
            writer.add_bytes(name, b"x")
        assert info.value.code == code


def test_phase_folder_accepts_new_files_but_never_replaces(tmp_path: Path) -> None:
    p1 = write_package(tmp_path / "g1.zip", {"original/intake.json": b"{}"})
    p2 = _next(p1, tmp_path / "g2.zip", analysis__interpretations__0001__context=b"c")
    p3 = _next(p2, tmp_path / "g3.zip", analysis__interpretations__0001__result=b"r")
    assert members(p3)["analysis/interpretations/0001/context"] == b"c"
    with PackageReader(p3) as reader, pytest.raises(PackageError):
        PackageWriter(reader).add_bytes("analysis/interpretations/0001/result", b"other")


def test_identity_and_generation_are_enforced(tmp_path: Path) -> None:
    p1 = write_package(tmp_path / "g1.zip", {"original/intake.json": b"{}"})
    with PackageReader(p1) as reader:
        writer = PackageWriter(reader)
        writer.update_manifest(package_id="other")
        with pytest.raises(PackageError) as info, open(tmp_path / "x.zip", "wb") as f:
            writer.write(f)
        assert info.value.code == "package.identity_mismatch"
        writer = PackageWriter(reader)
        writer.update_manifest(package_generation=5)
        with pytest.raises(PackageError) as info, open(tmp_path / "y.zip", "wb") as f:
            writer.write(f)
        assert info.value.code == "package.generation_mismatch"
        writer = PackageWriter(reader)
        writer.set_pointer("canonical_case", "analysis/missing.json")
        with pytest.raises(PackageError) as info, open(tmp_path / "z.zip", "wb") as f:
            writer.write(f)
        assert info.value.code == "package.dangling_pointer"


def test_unknown_manifest_keys_survive(tmp_path: Path) -> None:
    from viano_bug_analysis.packages import Manifest

    m = Manifest(package_id="p", case_id="c", extra={"x-vendor": {"k": [1, 2]}})
    w = PackageWriter.new(m)
    w.add_bytes("original/a", b"a")
    with open(tmp_path / "g1.zip", "wb") as f:
        w.write(f)
    p2 = _next(tmp_path / "g1.zip", tmp_path / "g2.zip", extra__b=b"b")
    with PackageReader(p2) as r:
        assert r.require_manifest().extra == {"x-vendor": {"k": [1, 2]}}


_names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}", fullmatch=True).filter(
    lambda s: s not in (".", "..")
)
_files = st.dictionaries(
    st.tuples(st.sampled_from(["original", "original/att", "vendor", "x-data"]), _names).map(
        lambda t: f"{t[0]}/{t[1]}"
    ),
    st.binary(max_size=3000),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=_files, compress=st.booleans())
def test_original_and_unknown_files_are_byte_identical_in_every_generation(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes], compress: bool
) -> None:
    from viano_bug_analysis.case import CaseBuilder
    from viano_bug_analysis.packages import Manifest, PackageStore

    folded = {n.casefold() for n in files}
    assume(len(folded) == len(files))  # names that clash on a case-insensitive disk
    assume(not any(other.startswith(n + "/") for n in files for other in files))
    tmp = tmp_path_factory.mktemp("prop")
    files = {**files, "original/intake.json": b'{"intake_format": "viano-intake/1", "title": "t"}'}
    w = PackageWriter.new(Manifest(package_id="p", case_id="c"))
    for name, data in files.items():
        w.add_bytes(name, data, compress=compress)
    with open(tmp / "in.zip", "wb") as f:
        w.write(f)
    store = PackageStore.init(tmp / "s")
    store.add(tmp / "in.zip")
    CaseBuilder(store).build("c", "p")
    with store.lock("c", "p") as op:
        with op.current().open() as r:
            w2 = PackageWriter(r)
            w2.add_bytes("analysis/interpretations/0001/context.json", b"{}")
            op.publish(w2)
    for number in store.generations("c", "p"):
        got = members(store.generation("c", "p", number).path)
        for name, data in files.items():
            assert got[name] == data, (number, name)


@pytest.mark.parametrize("compressor", ["isal", "zlib"])
def test_large_members_are_plain_deflate_with_either_compressor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressor: str
) -> None:
    """Large members are deflated in pieces by ISA-L when python-isal is installed, else
    by the standard zlib: either way a plain deflate stream that zipfile and unzip read,
    and the same bytes on every write."""
    import random
    import shutil
    import subprocess
    import zlib

    from viano_bug_analysis.packages import Manifest
    from viano_bug_analysis.packages import reader as reader_module
    from viano_bug_analysis.packages import writer as writer_module

    if compressor == "isal":
        isal_zlib = pytest.importorskip("isal.isal_zlib")
        monkeypatch.setattr(reader_module, "_FAST_ZLIB", isal_zlib)
    else:
        monkeypatch.setattr(reader_module, "_FAST_ZLIB", zlib)
    rng = random.Random(9)
    words = [b"export ", b"worker ", b"\xc3\xa9t\xc3\xa9 ", b'{"id":"C0001"}\n']
    size = 2 * writer_module.DEFLATE_PIECE_BYTES + 12345
    big = b"".join(rng.choice(words) for _ in range(size // 8))
    written = []
    for name in ("a.zip", "b.zip"):
        writer = PackageWriter.new(Manifest(package_id="p", case_id="c"))
        writer.add_bytes("original/big.json", big)
        with open(tmp_path / name, "wb") as f:
            writer.write(f)
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1]
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.testzip() is None
        info = z.getinfo("original/big.json")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.compress_size < info.file_size // 2
        assert z.read("original/big.json") == big
    if shutil.which("unzip"):
        out = subprocess.run(
            ["unzip", "-p", str(tmp_path / "a.zip"), "original/big.json"],
            capture_output=True,
            check=True,
        )
        assert out.stdout == big


def test_large_member_is_deflated_in_pieces_readably_and_reproducibly(tmp_path: Path) -> None:
    import random
    import zipfile

    from viano_bug_analysis.packages import Manifest, PackageReader, PackageWriter
    from viano_bug_analysis.packages.writer import DEFLATE_PIECE_BYTES

    rng = random.Random(4)
    words = [b"alpha ", b"beta ", b"\xc3\xa9t\xc3\xa9 ", b"{}\n"]
    big = b"".join(rng.choice(words) for _ in range(3 * DEFLATE_PIECE_BYTES // 4 + 99))
    outputs = []
    for name in ("a.zip", "b.zip"):
        writer = PackageWriter.new(Manifest(package_id="p", case_id="c"))
        writer.add_bytes("original/big.txt", big)
        writer.add_bytes("original/small.txt", b"small")
        writer.add_bytes("original/stored.bin", big, compress=False)
        with open(tmp_path / name, "wb") as f:
            writer.write(f)
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]  # the same bytes, whatever the threads did
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.testzip() is None
        info = z.getinfo("original/big.txt")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        assert info.compress_size < info.file_size
        assert z.read("original/big.txt") == big
        assert z.getinfo("original/stored.bin").compress_type == zipfile.ZIP_STORED
    with PackageReader(tmp_path / "a.zip") as reader:
        assert reader.read("original/big.txt") == big
        assert reader.read("original/small.txt") == b"small"
