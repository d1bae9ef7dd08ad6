"""A store no package can break (issue 39, ADR 0100).

- Hypothesis builds manifests with arbitrary JSON values in every field; whatever a
  hostile package does (refused, added, built), a valid package still adds, builds and
  shows in the same store afterwards, and every failure is a typed ``VianoError``.
- Integers the index cannot hold are refused before anything is written.
- A file the index cannot take is quarantined with a typed report on open.
- A symbolic link planted in every kind of store folder is never followed: files outside
  the store stay byte for byte, and the command answers with a typed code.
- NUL and invalid UTF-8 member names, and a package whose members inflate far beyond
  its size, get codes of their own.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from viano_helpers import INTAKE, intake_package, manifest_bytes, raw_zip, write_package

from viano_bug_analysis.case import CaseBuilder
from viano_bug_analysis.cli import app
from viano_bug_analysis.errors import PackageError, StoreError, VianoError
from viano_bug_analysis.packages import PackageStore
from viano_bug_analysis.packages.format import MAX_COUNT

runner = CliRunner()

MANIFEST_FIELDS = (
    "format",
    "format_version",
    "package_id",
    "case_id",
    "package_generation",
    "analysis_revision",
    "phase",
    "pointers",
    "checkpoints",
    "inputs",
    "source",
)

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63 - 1, 2**63, 2**53, 2**53 + 1, 10**30, -1, 0, 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["\ud800", "demo-case", "supplied", "SUPPLIED", "original/intake.json"])
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _hostile_zip(path: Path, manifest: dict[str, Any]) -> Path:
    data = json.dumps(manifest, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")
    intake = json.dumps({**INTAKE, "case_id": "hostile"}).encode()
    return raw_zip(path, [("manifest.json", data), ("original/intake.json", intake)])


def _valid_package_works(store: PackageStore, tmp_path: Path, case_id: str) -> None:
    package = intake_package(tmp_path / f"{case_id}.zip", {**INTAKE, "case_id": case_id})
    reopened = PackageStore.open(store.root)
    _gen, status = reopened.add(package)
    assert status in ("added", "unchanged")
    CaseBuilder(reopened).build(case_id, "supplied")
    shown = PackageStore.open(store.root).current(case_id, "supplied")
    assert shown.analysis_revision >= 1


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.dictionaries(st.sampled_from(MANIFEST_FIELDS), _json, min_size=1, max_size=4),
    base_ok=st.booleans(),
)
def test_any_manifest_leaves_the_store_usable(
    tmp_path_factory: pytest.TempPathFactory, fields: dict[str, Any], base_ok: bool
) -> None:
    root = tmp_path_factory.mktemp("hyp")
    store = PackageStore.init(root / "store")
    manifest = json.loads(manifest_bytes(case_id="hostile")) if base_ok else {}
    manifest.update(fields)
    hostile = _hostile_zip(root / "hostile.zip", manifest)
    added = _viano_json("add", str(store.root), str(hostile))
    if added["status"] != "error":  # valid enough to add: building and showing stay typed
        ids = [str(added["case_id"]), str(added["package_id"])]
        _viano_json("build", str(store.root), *ids)
        _viano_json("show", str(store.root), *ids)
    _valid_package_works(store, root, "valid-after")


def _viano_json(*args: str) -> dict[str, Any]:
    """`viano ARGS --json` in this process: one JSON object, whatever happens."""
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    assert (payload["status"] == "error") == (result.exit_code == 1)
    if payload["status"] == "error":
        assert payload["error"]["code"] != "internal.unexpected", payload
    return payload


@pytest.mark.parametrize(
    "fields",
    [
        {"package_generation": 10**30},
        {"package_generation": 2**63},
        {"analysis_revision": 2**63},
        {"package_generation": MAX_COUNT + 1},
        {"checkpoints": [{"name": "x", "analysis_revision": 2**64, "package_generation": 1}]},
        {"source": {"n": 2**64}},
        {"source": {"n": float("nan")}},
        {"source": {"text": "\ud800"}},
        {"source": {"n": int("9" * 400)}},
    ],
)
def test_numbers_the_index_cannot_hold_are_refused_before_writing(
    store: PackageStore, tmp_path: Path, fields: dict[str, Any]
) -> None:
    hostile = _hostile_zip(tmp_path / "h.zip", {**json.loads(manifest_bytes()), **fields})
    with pytest.raises(PackageError) as info:
        store.add(hostile)
    assert info.value.code == "package.manifest_invalid"
    assert not list((store.root / "packages").rglob("*.zip"))
    _valid_package_works(store, tmp_path, "still-fine")


def test_the_last_generation_number_is_refused_typed(store: PackageStore, tmp_path: Path) -> None:
    package = intake_package(tmp_path / "p.zip")
    data = json.loads(manifest_bytes(package_generation=MAX_COUNT))
    data["inputs"] = [{"member": "original/intake.json", "format": "viano-intake"}]
    with zipfile.ZipFile(package) as z:
        members = {n: z.read(n) for n in z.namelist() if n != "manifest.json"}
    last = raw_zip(
        tmp_path / "last.zip", [("manifest.json", json.dumps(data).encode()), *members.items()]
    )
    store.add(last)
    with pytest.raises(VianoError) as info:
        CaseBuilder(store).build("demo-case", "supplied")
    assert info.value.code == "package.counter_exhausted"
    assert store.generations("demo-case", "supplied") == [MAX_COUNT]
    _valid_package_works(store, tmp_path, "other-case")


def test_an_unindexable_file_is_quarantined_with_a_report(
    store: PackageStore, tmp_path: Path
) -> None:
    """A generation file written before this check existed (or by hand) is moved aside
    on open; the store carries on."""
    folder = store.root / "packages" / "demo-case" / "supplied"
    folder.mkdir(parents=True)
    bad = _hostile_zip(
        tmp_path / "bad.zip",
        {**json.loads(manifest_bytes()), "package_generation": 10**30},
    )
    os.replace(bad, folder / f"gen-{10**30}.zip")
    (folder / "gen-000001.zip").mkdir()  # not a regular file either
    reopened = PackageStore.open(store.root)
    assert not list(folder.iterdir())
    reports = sorted((store.root / "quarantine").glob("*.json"))
    codes = {json.loads(p.read_text())["code"] for p in reports}
    assert codes == {"package.manifest_invalid", "store.not_regular_file"}
    with pytest.raises(StoreError) as info:
        reopened.current("demo-case", "supplied")
    assert info.value.code == "store.not_found"
    _valid_package_works(store, tmp_path, "valid-after")


# -- symbolic links -----------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".tmp-keep.zip").write_bytes(b"keep me")
    (outside / "gen-000001.zip").write_bytes(b"not yours")
    (outside / "supplied").mkdir()
    (outside / "supplied" / "gen-000001.zip").write_bytes(b"nor this")
    (outside / "supplied.lock").write_bytes(b"a lock file's target")
    (outside / "file.bin").write_bytes(b"outside bytes")
    return outside


LINKS = {
    "case folder": ("packages/evilcase", "outside"),
    "package folder": ("packages/demo-case/evilpkg", "outside"),
    "generation file": ("packages/demo-case/supplied/gen-000002.zip", "outside/file.bin"),
    "temporary file": ("packages/demo-case/supplied/.tmp-evil.zip", "outside/.tmp-keep.zip"),
    "lock case folder": ("locks/evilcase", "outside"),
    "lock file": ("locks/demo-case/supplied.lock", "outside/supplied.lock"),
    "quarantine": ("quarantine", "outside"),
    "index": ("index.sqlite-wal", "outside/file.bin"),
    "marker": ("viano-store.json", "outside/file.bin"),
    "packages": ("packages", "outside"),
    "locks": ("locks", "outside"),
}


@pytest.mark.parametrize("where", sorted(LINKS))
def test_a_planted_link_is_never_followed(tmp_path: Path, where: str) -> None:
    store = PackageStore.init(tmp_path / "store")
    store.add(intake_package(tmp_path / "p.zip"))
    outside = _outside(tmp_path)
    before = _snapshot(outside)
    link, target = LINKS[where]
    path = store.root / link
    if path.is_dir() and not path.is_symlink():
        for p in sorted(path.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        path.rmdir()
    elif path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(tmp_path / target)
    # a broken generation so that opening repairs (and would quarantine) something
    extra = store.root / "packages" / "demo-case" / "supplied" / "gen-000003.zip"
    if not (store.root / "packages").is_symlink():
        extra.write_bytes(b"not a zip")
    outcomes: list[str] = []
    for action in (
        lambda: PackageStore.open(store.root).current("evilcase", "supplied"),
        lambda: PackageStore.open(store.root).current("demo-case", "evilpkg"),
        lambda: PackageStore.open(store.root).current("demo-case", "supplied"),
        lambda: CaseBuilder(PackageStore.open(store.root)).build("demo-case", "supplied"),
        lambda: PackageStore.open(store.root).add(
            intake_package(tmp_path / "q.zip", {**INTAKE, "case_id": "evilcase"})
        ),
    ):
        try:
            action()
            outcomes.append("ok")
        except VianoError as exc:
            outcomes.append(exc.code)
    assert _snapshot(outside) == before, outcomes
    assert sorted(p.name for p in outside.iterdir()) == sorted(
        [".tmp-keep.zip", "gen-000001.zip", "supplied", "supplied.lock", "file.bin"]
    )
    if where in ("case folder", "lock case folder", "lock file", "marker", "index"):
        assert "store.symlink" in outcomes, outcomes


# -- member names and sizes -----------------------------------------------------------------


def test_nul_in_a_member_name(store: PackageStore, tmp_path: Path) -> None:
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes()), ("original/aXb", b"x")])
    p.write_bytes(p.read_bytes().replace(b"original/aXb", b"original/a\x00b"))
    with pytest.raises(PackageError) as info:
        store.add(p)
    assert info.value.code == "package.nul_in_name"


def test_invalid_utf8_name_flagged_utf8(store: PackageStore, tmp_path: Path) -> None:
    info = zipfile.ZipInfo("original/\u00e9.txt")  # non-ASCII: zipfile sets bit 11
    p = raw_zip(tmp_path / "p.zip", [("manifest.json", manifest_bytes()), (info, b"x")])
    p.write_bytes(p.read_bytes().replace("\u00e9".encode(), b"\xff\xfe"))
    with pytest.raises(PackageError) as caught:
        store.add(p)
    assert caught.value.code == "package.invalid_utf8_name"


def test_many_members_under_the_member_ratio_still_bound_the_package(
    store: PackageStore, tmp_path: Path
) -> None:
    """80 members of 1 MiB - 1 byte each (each below the per-member ratio floor) inflate
    80 MiB from a file of about 80 KiB: refused by the package's own ratio bound."""
    member = b"\0" * ((1 << 20) - 1)
    files = {f"original/part-{i:03d}.bin": member for i in range(80)}
    p = write_package(tmp_path / "p.zip", files)
    assert p.stat().st_size < 1 << 20
    with pytest.raises(PackageError) as info:
        store.add(p)
    assert info.value.code == "package.compression_ratio"


def test_a_device_or_fifo_is_no_package(store: PackageStore, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo):
        with pytest.raises(PackageError) as info:
            store.add(path)
        assert info.value.code == "package.not_regular_file"


def test_an_index_sqlite_cannot_open_is_rebuilt_from_the_files(
    store: PackageStore, tmp_path: Path
) -> None:
    store.add(intake_package(tmp_path / "p.zip"))
    (store.root / "index.sqlite").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (store.root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    reopened = PackageStore.open(store.root)
    assert reopened.current("demo-case", "supplied").generation == 1
    notes = list((store.root / "quarantine").glob("index.sqlite.unreadable-*.json"))
    assert json.loads(notes[0].read_text())["code"] == "store.index_unreadable"
