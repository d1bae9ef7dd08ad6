"""The publication protocol: generation N+1 of a package, written crash-safely.

``PackageOperation.publish`` (inside ``with store.lock(case_id, package_id) as op``):

1. write the package to ``.tmp-<random>.zip`` in the package folder  -> step "temp_written"
2. flush + fsync the temporary file                                   -> "temp_fsynced"
3. validate it, then ``os.link`` it to ``gen-NNNNNN.zip`` (fails if that name exists:
   a generation file is never overwritten) and unlink the temporary  -> "renamed"
4. fsync the package folder                                           -> "dir_fsynced"
5. update the index in one SQLite transaction                         -> "index_updated"

A crash before step 3 leaves generation N current (the temporary file is removed on the
next open); a crash after it leaves N+1 complete on disk, and the next open makes it
current in the index. Crash-injection hooks run after each named step: pass
``crash_hook=callable(step)`` to the store or set ``VIANO_CRASH_AT=<step>`` (the process
then exits at once with status 86, as a test of a crash; never set it in production).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from modelgate.atomicfile import fsync_folder
from viano_bug_analysis.errors import PackageError, StoreError
from viano_bug_analysis.packages.format import MAX_COUNT, Manifest
from viano_bug_analysis.packages.generations import (
    GenerationFiles,
    PackageGeneration,
    file_sha256,
)
from viano_bug_analysis.packages.layout import TEMPORARY_PREFIX, generation_file_name
from viano_bug_analysis.packages.locks import OperationLock
from viano_bug_analysis.packages.reader import CHUNK, PackageReader
from viano_bug_analysis.packages.spool import Spool
from viano_bug_analysis.packages.threads import background_pool
from viano_bug_analysis.packages.writer import PackageWriter

PUBLISH_STEPS = ("temp_written", "temp_fsynced", "renamed", "dir_fsynced", "index_updated")
CRASH_ENV = "VIANO_CRASH_AT"
CRASH_EXIT_STATUS = 86

CrashHook = Callable[[str], None]


class CrashPoints:
    """The crash-injection hooks of the publication steps (tests only)."""

    def __init__(self, hook: CrashHook | None = None) -> None:
        self._hook = hook
        self._crash_at = os.environ.get(CRASH_ENV)

    def __call__(self, step: str) -> None:
        if self._crash_at == step:
            os._exit(CRASH_EXIT_STATUS)
        if self._hook is not None:
            self._hook(step)


class PackageOperation:
    """An exclusive operation on one (case, package), from ``store.lock(...)``.

    Inside ``with``: :meth:`current`, :meth:`publish` (write the next generation from a
    :class:`PackageWriter` whose base is the current generation). Entering raises
    LockBusy at once when another operation holds the package."""

    def __init__(
        self, files: GenerationFiles, crash: CrashPoints, case_id: str, package_id: str
    ) -> None:
        self.files = files
        self.case_id = case_id
        self.package_id = package_id
        self._crash = crash
        self._folder = files.layout.package_dir(case_id, package_id)  # checks the identities
        lock_path = files.layout.lock_path(case_id, package_id)
        self._lock = OperationLock(lock_path, f"{case_id}/{package_id}")
        self._in_use: contextlib.AbstractContextManager[None] | None = None

    def __enter__(self) -> PackageOperation:
        self._lock.acquire()
        self._in_use = self.files.index.in_use()
        self._in_use.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._in_use is not None:
                self._in_use.__exit__(None, None, None)
        finally:
            self._in_use = None
            self._lock.release()

    def _require_lock(self) -> None:
        if not self._lock.held:
            raise StoreError("operation used outside its `with` block", code="store.not_locked")

    def current(self) -> PackageGeneration:
        generation, reader = self.open_current()
        reader.close()
        return generation

    def open_current(self) -> tuple[PackageGeneration, PackageReader]:
        """The current generation and an open reader on it (close it)."""
        return self.files.open_current(self.case_id, self.package_id)

    def publish(self, writer: PackageWriter) -> PackageGeneration:
        """Publish ``writer``'s generation atomically; it must extend the current one."""
        generation, reader = self.publish_open(writer)
        reader.close()
        return generation

    def publish_open(self, writer: PackageWriter) -> tuple[PackageGeneration, PackageReader]:
        """:meth:`publish`, also returning the reader that validated the written file
        (open on the published generation; the caller closes it)."""
        self._require_lock()
        manifest = writer.manifest
        if (manifest.case_id, manifest.package_id) != (self.case_id, self.package_id):
            raise PackageError("writer is for another package", code="package.identity_mismatch")
        if max(manifest.package_generation, manifest.analysis_revision) > MAX_COUNT:
            raise PackageError(
                f"{self.case_id}/{self.package_id} has no generation or revision number left "
                f"(at most {MAX_COUNT})",
                code="package.counter_exhausted",
            )
        generations = self.files.layout.generations(self.case_id, self.package_id)
        latest = generations[-1] if generations else 0
        if manifest.package_generation != latest + 1:
            raise StoreError(
                f"generation {manifest.package_generation} does not follow {latest}",
                code="store.generation_conflict",
            )
        tmp = self._temporary()
        try:
            with open(tmp, "xb") as f:
                spool = Spool(f)
                writer.write(spool)  # type: ignore[arg-type]  # the file methods zipfile uses
                known = spool.finish()
                self._crash("temp_written")
                f.flush()
                # a large file is hashed in the background while it is fsynced
                hashing = None if known else background_pool().submit(file_sha256, tmp)
                os.fsync(f.fileno())
            self._crash("temp_fsynced")
            if known is None:
                assert hashing is not None
                known = hashing.result()
            return self._link_and_index(tmp, manifest, known)
        finally:
            tmp.unlink(missing_ok=True)

    def publish_file(self, source: Path, manifest: Manifest) -> PackageGeneration:
        """Copy an already validated package file in as its manifest's generation."""
        self._require_lock()
        tmp = self._temporary()
        try:
            with open(source, "rb") as src, open(tmp, "xb") as f:
                shutil.copyfileobj(src, f, CHUNK)
                self._crash("temp_written")
                f.flush()
                os.fsync(f.fileno())
            self._crash("temp_fsynced")
            generation, reader = self._link_and_index(tmp, manifest, file_sha256(tmp))
            reader.close()
            return generation
        finally:
            tmp.unlink(missing_ok=True)

    def _temporary(self) -> Path:
        self._folder.mkdir(parents=True, exist_ok=True)
        return self._folder / f"{TEMPORARY_PREFIX}{secrets.token_hex(8)}.zip"

    def _link_and_index(
        self, tmp: Path, manifest: Manifest, digest: tuple[str, int]
    ) -> tuple[PackageGeneration, PackageReader]:
        """Validate the written file, link it as its generation, fsync the folder, index
        it. Returns the validating reader, still open (same file: the link keeps it)."""
        reader = PackageReader(tmp, limits=self.files.limits)
        try:
            if reader.require_manifest() != manifest:
                raise PackageError(
                    "written manifest differs from the intended one", code="package.corrupt"
                )
            final = self._folder / generation_file_name(manifest.package_generation)
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise StoreError(
                    f"{final.name} already exists; generation files are never replaced",
                    code="store.generation_conflict",
                ) from None
            tmp.unlink()
            self._crash("renamed")
            fsync_folder(self._folder)
            self._crash("dir_fsynced")
            sha, size = digest  # of the written bytes
            generation = PackageGeneration(
                self.case_id,
                self.package_id,
                manifest.package_generation,
                final,
                sha,
                size,
                manifest,
            )
            self.index(generation)
            self._crash("index_updated")
        except BaseException:
            reader.close()
            raise
        reader.path = generation.path
        return generation, reader

    def index(self, gen: PackageGeneration) -> None:
        """Record ``gen`` in the store index."""
        self.files.index.record(
            gen.case_id,
            gen.package_id,
            gen.generation,
            gen.analysis_revision,
            gen.phase,
            gen.sha256,
            gen.size,
        )
