"""PackageStore: a folder of immutable generation files, its index, operation locks.

The parts, one job each: ``layout`` (where the files are), ``index`` (the SQLite cache of
the files, and the connection and lock policy), ``generations`` (opening a generation),
``publication`` (the crash-safe protocol of generation N+1, inside an operation lock),
``repair`` (the index made to match the files). This module creates and opens stores,
answers queries, and adds and exports package files.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from modelgate.atomicfile import atomic_write
from viano_bug_analysis.errors import StoreError
from viano_bug_analysis.packages.format import PackageLimits
from viano_bug_analysis.packages.generations import (
    GenerationFiles,
    PackageGeneration,
    file_sha256,
)
from viano_bug_analysis.packages.index import StoreIndex
from viano_bug_analysis.packages.layout import StoreLayout, read_store_file
from viano_bug_analysis.packages.publication import CrashHook, CrashPoints, PackageOperation
from viano_bug_analysis.packages.reader import CHUNK, PackageReader
from viano_bug_analysis.packages.repair import repair_store
from viano_bug_analysis.packages.writer import PackageWriter

STORE_FORMAT = "viano-store"
STORE_VERSION = 1

Progress = Callable[[str, int, int], None]


def verify_members(reader: PackageReader, progress: Progress | None = None) -> None:
    """Read every member through (CRC-32 and size checks); raises PackageError."""
    names = reader.files()
    for i, name in enumerate(names):
        for _ in reader.iter_chunks(name):
            pass
        if progress:
            progress("verify", i + 1, len(names))


class PackageStore:
    """A directory of packages. ``PackageStore.init(dir)`` creates one,
    ``PackageStore.open(dir)`` opens (and repairs) one."""

    def __init__(
        self,
        root: Path,
        *,
        crash_hook: CrashHook | None = None,
        limits: PackageLimits | None = None,
    ) -> None:
        self.root = root
        self.limits = limits or PackageLimits()
        self.layout = StoreLayout(root)
        self.index = StoreIndex(self.layout.index)
        self._files = GenerationFiles(self.layout, self.index, self.limits)
        self._crash = CrashPoints(crash_hook)

    # -- creation and opening ------------------------------------------------------------

    @classmethod
    def init(cls, root: str | Path, **kwargs: object) -> PackageStore:
        """Create a store in ``root`` (an empty or absent directory); idempotent."""
        layout = StoreLayout(Path(root))
        marker = layout.marker
        if layout.root.exists() and not marker.exists() and any(layout.root.iterdir()):
            raise StoreError(f"{layout.root} is not empty and not a store", code="store.not_empty")
        for folder in (layout.packages, layout.locks, layout.quarantine):
            folder.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            with atomic_write(marker) as f:
                f.write(json.dumps({"format": STORE_FORMAT, "version": STORE_VERSION}).encode())
                f.write(b"\n")
        store = cls(layout.root, **kwargs)  # type: ignore[arg-type]
        store.index.create()
        return store

    @classmethod
    def open(cls, root: str | Path, *, repair: bool = True, **kwargs: object) -> PackageStore:
        """Open an existing store; ``repair`` brings the index in line with the files."""
        marker = StoreLayout(Path(root)).marker
        try:
            info = json.loads(read_store_file(marker, 1 << 16).decode("utf-8"))
        except FileNotFoundError:
            raise StoreError(
                f"{root} is not a store (run `viano store init`)", code="store.not_initialized"
            ) from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"store marker unreadable: {exc}", code="store.corrupt") from None
        if (
            not isinstance(info, dict)
            or info.get("format") != STORE_FORMAT
            or info.get("version") != STORE_VERSION
        ):
            raise StoreError(f"unsupported store format {info!r}", code="store.unsupported")
        store = cls(Path(root), **kwargs)  # type: ignore[arg-type]
        try:
            store.index.create()
        except sqlite3.DatabaseError as exc:
            # the index is a cache of the generation files (ADR 0020): one that SQLite
            # cannot open is moved to quarantine/ and rebuilt by the repair below
            store._quarantine_index(exc)
            store.index.create()
        if repair:
            store.repair()
        return store

    def _quarantine_index(self, exc: Exception) -> None:
        index = self.layout.index
        quarantine = self.layout.quarantine
        quarantine.mkdir(exist_ok=True)
        stamp = f"{time.time_ns()}"
        for path in (index, *(index.with_name(index.name + s) for s in ("-wal", "-shm"))):
            if os.path.lexists(path):
                os.replace(path, quarantine / f"{path.name}.unreadable-{stamp}")
        note = {"code": "store.index_unreadable", "message": str(exc)[:500], "file": index.name}
        with atomic_write(quarantine / f"{index.name}.unreadable-{stamp}.json") as f:
            f.write(json.dumps(note, sort_keys=True).encode() + b"\n")

    # -- queries ----------------------------------------------------------------------------

    def package_dir(self, case_id: str, package_id: str) -> Path:
        return self.layout.package_dir(case_id, package_id)

    def current(self, case_id: str, package_id: str) -> PackageGeneration:
        """The current generation; raises StoreError ``store.not_found`` if none."""
        generation, reader = self.open_current(case_id, package_id)
        reader.close()
        return generation

    def open_current(
        self, case_id: str, package_id: str
    ) -> tuple[PackageGeneration, PackageReader]:
        """The current generation and a reader on it (the one that read its manifest;
        the caller closes it)."""
        return self._files.open_current(case_id, package_id)

    def generation(self, case_id: str, package_id: str, generation: int) -> PackageGeneration:
        """A specific generation (old generations stay readable)."""
        found, reader = self._files.open(case_id, package_id, generation)
        reader.close()
        return found

    def generations(self, case_id: str, package_id: str) -> list[int]:
        """Numbers of all generation files of a package, ascending."""
        return self.layout.generations(case_id, package_id)

    def list_packages(self) -> list[dict[str, object]]:
        """Index rows of every package (case_id, package_id, generation, revision, phase)."""
        return self.index.packages()

    def list_cases(self) -> list[str]:
        return self.index.cases()

    # -- operations -------------------------------------------------------------------------

    def lock(self, case_id: str, package_id: str) -> PackageOperation:
        """Exclusive operation on one (case, package): ``with store.lock(c, p) as op:``.

        Raises LockBusy at once if another operation holds it."""
        return PackageOperation(self._files, self._crash, case_id, package_id)

    def repair(self) -> list[str]:
        """Make the index match the generation files (see ``repair``); returns what was
        changed."""
        return repair_store(self._files, self.lock)

    def add(
        self,
        package_path: str | Path,
        *,
        replace_inputs: bool = False,
        progress: Progress | None = None,
    ) -> tuple[PackageGeneration, str]:
        """Add a supplied package file; returns (generation, status).

        status is ``"added"`` (a new package), ``"unchanged"`` (the same bytes are
        already a generation of it) or ``"resupplied"``. A different package with the
        same identities is refused with ``store.package_exists`` unless
        ``replace_inputs`` is true: then the next generation takes its ``original/``
        (see :meth:`PackageWriter.resupply`) and the next build confirms a new revision.
        The file is validated fully (every member read, CRC-32 checked) before anything
        is written.
        """
        path = Path(package_path)
        with PackageReader(path, limits=self.limits) as reader:
            manifest = reader.require_manifest()
            verify_members(reader, progress)
            manifest.check_references(reader)
        sha, _ = file_sha256(path)
        case_id, package_id = manifest.case_id, manifest.package_id
        with self.lock(case_id, package_id) as op:
            existing = self.generations(case_id, package_id)
            for number in existing:
                gen = self.generation(case_id, package_id, number)
                if gen.sha256 == sha:
                    return gen, "unchanged"
            if existing and replace_inputs:
                with (
                    op.current().open(self.limits) as base,
                    PackageReader(path, limits=self.limits) as supplied,
                ):
                    return op.publish(PackageWriter.resupply(base, supplied)), "resupplied"
            if existing:
                raise StoreError(
                    f"{case_id}/{package_id} already exists with other content",
                    code="store.package_exists",
                    case_id=case_id,
                    package_id=package_id,
                )
            return op.publish_file(path, manifest), "added"

    def export(
        self, case_id: str, package_id: str, out: str | Path, generation: int | None = None
    ) -> PackageGeneration:
        """Copy a generation file (default: current) to ``out`` atomically."""
        gen = (
            self.current(case_id, package_id)
            if generation is None
            else self.generation(case_id, package_id, generation)
        )
        with open(gen.path, "rb") as src, atomic_write(Path(out)) as dst:
            shutil.copyfileobj(src, dst, CHUNK)
        return gen
