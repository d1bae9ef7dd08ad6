"""Generations of a package in the store: the immutable files and how they are opened."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from viano_bug_analysis.errors import PackageError, StoreError
from viano_bug_analysis.packages.format import Manifest, PackageLimits
from viano_bug_analysis.packages.index import StoreIndex
from viano_bug_analysis.packages.layout import StoreLayout
from viano_bug_analysis.packages.reader import CHUNK, PackageReader


def file_sha256(path: Path) -> tuple[str, int]:
    """(SHA-256 hex, size) of a file, streamed."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


@dataclass(frozen=True)
class PackageGeneration:
    """One immutable generation file of a package in the store."""

    case_id: str
    package_id: str
    generation: int
    path: Path
    sha256: str
    size: int
    manifest: Manifest

    @property
    def analysis_revision(self) -> int:
        return self.manifest.analysis_revision

    @property
    def phase(self) -> str:
        return self.manifest.phase

    def open(self, limits: PackageLimits | None = None) -> PackageReader:
        """A reader on this generation (close it, or use ``with``)."""
        return PackageReader(self.path, limits=limits)

    def to_json(self) -> dict[str, object]:
        return {
            "case_id": self.case_id,
            "package_id": self.package_id,
            "package_generation": self.generation,
            "analysis_revision": self.analysis_revision,
            "phase": self.phase,
            "sha256": self.sha256,
            "size": self.size,
            "pointers": dict(self.manifest.pointers),
        }


@dataclass(frozen=True)
class GenerationFiles:
    """Opens the generation files of a store, with their index rows."""

    layout: StoreLayout
    index: StoreIndex
    limits: PackageLimits

    def open_current(
        self, case_id: str, package_id: str
    ) -> tuple[PackageGeneration, PackageReader]:
        """The current generation and a reader on it (the caller closes it); raises
        StoreError ``store.not_found`` when the package has none."""
        found = self.index.current(case_id, package_id)
        if found is None:
            raise StoreError(
                f"no package {package_id!r} in case {case_id!r}",
                code="store.not_found",
                case_id=case_id,
                package_id=package_id,
            )
        generation, known = found
        return self.open(case_id, package_id, generation, known)

    def open(
        self,
        case_id: str,
        package_id: str,
        generation: int,
        known: tuple[str, int] | None = None,
    ) -> tuple[PackageGeneration, PackageReader]:
        """Generation ``generation`` and a reader on it; ``known`` is its (sha256, size)
        when the caller has read its index row already (else it is read, or the file
        hashed when not indexed)."""
        path = self.layout.generation_path(case_id, package_id, generation)
        try:
            reader = PackageReader(path, limits=self.limits)
        except PackageError as exc:
            if exc.code == "package.not_found" or not path.is_file():
                raise StoreError(
                    f"generation {generation} of {case_id}/{package_id} does not exist",
                    code="store.not_found",
                ) from None
            raise
        try:
            manifest = reader.require_manifest()
            known = known or self.index.generation(case_id, package_id, generation)
            sha, size = file_sha256(path) if known is None else known
        except BaseException:
            reader.close()
            raise
        return PackageGeneration(case_id, package_id, generation, path, sha, size, manifest), reader
