"""Bad packages are refused with their diagnostic code, and nothing is written."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from viano_helpers import manifest_bytes, raw_zip, write_package

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages import PackageLimits, PackageReader, PackageStore


def _store_files(store: PackageStore) -> list[Path]:
    return sorted(p for p in (store.root / "packages").rglob("*") if p.is_file())


def _refused(store: PackageStore, path: Path, code: str) -> None:
    with pytest.raises(PackageError) as info:
        store.add(path)
    assert info.value.code == code
    assert _store_files(store) == []
    assert store.list_packages() == []


def test_path_traversal(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(
        tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("original/../../evil.txt", b"x")]
    )
    _refused(store, p, "package.path_traversal")


def test_absolute_name(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("/etc/passwd", b"x")])
    # zipfile strips a leading slash when writing, so patch the central directory name
    data = p.read_bytes().replace(b"etc/passwd", b"/tc/passwd")
    p.write_bytes(data)
    _refused(store, p, "package.absolute_path")


def test_windows_drive_name(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("C:x.txt", b"x")])
    _refused(store, p, "package.absolute_path")


def test_symlink(store: PackageStore, tmp_path: Path) -> None:
    link = zipfile.ZipInfo("original/link")
    link.external_attr = 0o120777 << 16
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes()), (link, b"/etc")])
    _refused(store, p, "package.symlink")


def test_duplicate_names(store: PackageStore, tmp_path: Path) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = raw_zip(
            tmp_path / "p.zip",
            [("manifest.json", manifest_bytes()), ("original/a", b"1"), ("original/a", b"2")],
        )
    _refused(store, p, "package.duplicate_name")


def test_case_folded_duplicates(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(
        tmp_path / "p.zip",
        [("manifest.json", manifest_bytes()), ("original/A.txt", b"1"), ("original/a.txt", b"2")],
    )
    _refused(store, p, "package.duplicate_name")


def test_zip_bomb_ratio(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(
        tmp_path / "p.zip",
        [("manifest.json", manifest_bytes()), ("original/zeros", b"\0" * (8 << 20))],
    )
    _refused(store, p, "package.compression_ratio")


def test_total_size_limit(tmp_path: Path) -> None:
    store = PackageStore.init(tmp_path / "s", limits=PackageLimits(max_total_bytes=1000))
    p = raw_zip(
        tmp_path / "p.zip",
        [("manifest.json", manifest_bytes()), ("original/a", bytes(range(256)) * 8)],
    )
    _refused(store, p, "package.total_too_large")


def test_lying_declared_size_is_stopped_while_streaming(tmp_path: Path) -> None:
    """A member whose header says 10 bytes but holds more is cut off while reading."""
    p = raw_zip(
        tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("original/a", b"A" * 5000)]
    )
    with zipfile.ZipFile(p) as z:
        info = z.getinfo("original/a")
    data = bytearray(p.read_bytes())
    # patch the central directory's uncompressed size (offset 24 in the entry)
    import struct

    pos = 0
    while True:
        pos = data.find(b"PK\x01\x02", pos)
        name_len = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46 : pos + 46 + name_len]) == b"original/a":
            struct.pack_into("<L", data, pos + 24, 10)
            break
        pos += 4
    p.write_bytes(bytes(data))
    assert info.file_size == 5000
    with PackageReader(p) as reader, pytest.raises(PackageError) as exc:
        reader.read("original/a")
    assert exc.value.code in ("package.size_mismatch", "package.corrupt")


def test_non_utf8_name(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(
        tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("original/caf\u00e9.txt", b"x")]
    )
    data = bytearray(p.read_bytes())
    # clear the UTF-8 flag (bit 11) in the central directory and local headers
    import struct

    for sig, flag_off in ((b"PK\x01\x02", 8), (b"PK\x03\x04", 6)):
        pos = 0
        while (pos := data.find(sig, pos)) >= 0:
            flags = struct.unpack_from("<H", data, pos + flag_off)[0]
            struct.pack_into("<H", data, pos + flag_off, flags & ~0x800)
            pos += 4
    p.write_bytes(bytes(data))
    _refused(store, p, "package.non_utf8_name")


def test_missing_manifest(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(tmp_path / "p.zip", [("original/a", b"x")])
    _refused(store, p, "package.manifest_missing")


@pytest.mark.parametrize(
    "manifest",
    [
        b"not json",
        b"[]",
        manifest_bytes(package_id="../x"),
        manifest_bytes(case_id=""),
        manifest_bytes(package_generation=0),
        manifest_bytes(pointers={"canonical_case": 3}),
        manifest_bytes(phase="lower case"),
    ],
)
def test_invalid_manifest(store: PackageStore, tmp_path: Path, manifest: bytes) -> None:
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest)])
    _refused(store, p, "package.manifest_invalid")


def test_unsupported_version(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes(format_version=9))])
    _refused(store, p, "package.unsupported_version")


def test_dangling_pointer(store: PackageStore, tmp_path: Path) -> None:
    m = manifest_bytes(pointers={"canonical_case": "analysis/revisions/0001/canonical_case.json"})
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", m)])
    _refused(store, p, "package.dangling_pointer")


def test_not_a_zip(store: PackageStore, tmp_path: Path) -> None:
    p = tmp_path / "p.zip"
    p.write_bytes(b"hello")
    _refused(store, p, "package.not_zip")


def test_corrupt_member_crc(store: PackageStore, tmp_path: Path) -> None:
    p = tmp_path / "p.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
        z.writestr("manifest.json", manifest_bytes())
        z.writestr("original/a", b"hello world, this is data")
    data = p.read_bytes().replace(b"hello world", b"HELLO world")
    p.write_bytes(data)
    _refused(store, p, "package.corrupt")


def test_identity_from_manifest_not_file_name(store: PackageStore, tmp_path: Path) -> None:
    p = write_package(
        tmp_path / "other-name-entirely.zip",
        {"original/intake.json": b"{}"},
        case_id="real-case",
        package_id="real-pkg",
    )
    gen, status = store.add(p)
    assert (gen.case_id, gen.package_id, status) == ("real-case", "real-pkg", "added")
    assert store.add(p)[1] == "unchanged"
