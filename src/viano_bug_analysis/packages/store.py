"""PackageStore: immutable generation files, a SQLite index, operation locks.

Layout of a store directory::

    DIR/viano-store.json                        marker {"format": "viano-store", ...}
    DIR/index.sqlite                            cases, packages, generations (derived)
    DIR/locks/<case_id>/<package_id>.lock       operation locks (fcntl.flock)
    DIR/packages/<case_id>/<package_id>/gen-000001.zip   immutable generation files
    DIR/quarantine/                             generation files that failed validation

The generation files are the truth; the index is a cache of them that is repaired on
open. Publication of generation N+1 (``PackageOperation.publish``):

1. write the package to ``.tmp-<random>.zip`` in the package folder  -> step "temp_written"
2. flush + fsync the temporary file                                   -> "temp_fsynced"
3. validate it, then ``os.link`` it to ``gen-NNNNNN.zip`` (fails if that name exists:
   a generation file is never overwritten) and unlink the temporary  -> "renamed"
4. fsync the package folder                                           -> "dir_fsynced"
5. update the index in one SQLite transaction                         -> "index_updated"

A crash before step 3 leaves generation N current (the temporary file is removed on the
next open); a crash after it leaves N+1 complete on disk, and the next open makes it
current in the index. Crash-injection hooks run after each named step: pass
``crash_hook=callable(step)`` or set ``VIANO_CRASH_AT=<step>`` (the process then exits at
once with status 86, as a test of a crash; never set it in production).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from modelgate.atomicfile import atomic_write, fsync_folder
from viano_bug_analysis.errors import PackageError, StoreError
from viano_bug_analysis.packages.format import Manifest, PackageLimits, check_identity
from viano_bug_analysis.packages.locks import OperationLock
from viano_bug_analysis.packages.reader import CHUNK, PackageReader
from viano_bug_analysis.packages.spool import Spool
from viano_bug_analysis.packages.threads import background_pool
from viano_bug_analysis.packages.writer import PackageWriter

STORE_MARKER = "viano-store.json"
STORE_FORMAT = "viano-store"
STORE_VERSION = 1
PUBLISH_STEPS = ("temp_written", "temp_fsynced", "renamed", "dir_fsynced", "index_updated")
CRASH_ENV = "VIANO_CRASH_AT"
CRASH_EXIT_STATUS = 86
_GEN_RE = re.compile(r"^gen-(\d{6,})\.zip$")

# The index is a cache of the generation files (ADR 0020), so it trades durability for
# speed (ADR 0044): write-ahead log, and commits that do not wait for fsync
# (synchronous=NORMAL). A process crash loses nothing; a power loss may lose the last
# commits, and the next ``open()`` repairs them from the fsynced generation files.
# Readers never wait for a writer in WAL mode.
_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS cases (
    case_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS packages (
    case_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    current_generation INTEGER NOT NULL,
    analysis_revision INTEGER NOT NULL,
    phase TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (case_id, package_id)
);
CREATE TABLE IF NOT EXISTS generations (
    case_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    analysis_revision INTEGER NOT NULL,
    phase TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    published_at TEXT NOT NULL,
    PRIMARY KEY (case_id, package_id, generation)
);
"""

CrashHook = Callable[[str], None]


def generation_file_name(generation: int) -> str:
    return f"gen-{generation:06d}.zip"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_sha256(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def verify_members(
    reader: PackageReader, progress: Callable[[str, int, int], None] | None = None
) -> None:
    """Read every member through (CRC-32 and size checks); raises PackageError."""
    names = reader.files()
    for i, name in enumerate(names):
        for _ in reader.iter_chunks(name):
            pass
        if progress:
            progress("verify", i + 1, len(names))


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
        self._crash_hook = crash_hook
        self._crash_at = os.environ.get(CRASH_ENV)
        self._idle_connections: list[sqlite3.Connection] = []
        self._running_operations = 0
        self._pool_lock = threading.Lock()
        # Index writers of this process queue here instead of in SQLite's busy handler,
        # which sleeps 1, 2, 5, 10 ... ms between tries (other processes still meet it)
        self._index_write_lock = threading.Lock()

    # -- creation and opening ------------------------------------------------------------

    @classmethod
    def init(cls, root: str | Path, **kwargs: object) -> PackageStore:
        """Create a store in ``root`` (an empty or absent directory); idempotent."""
        root = Path(root)
        marker = root / STORE_MARKER
        if root.exists() and not marker.exists() and any(root.iterdir()):
            raise StoreError(f"{root} is not empty and not a store", code="store.not_empty")
        for sub in ("packages", "locks", "quarantine"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            text = json.dumps({"format": STORE_FORMAT, "version": STORE_VERSION}) + "\n"
            tmp = root / f".tmp-{secrets.token_hex(8)}"
            tmp.write_text(text, encoding="utf-8")
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.replace(tmp, marker)
            fsync_folder(root)
        store = cls(root, **kwargs)  # type: ignore[arg-type]
        with store._db() as db:
            db.executescript(_SCHEMA)
        return store

    @classmethod
    def open(cls, root: str | Path, *, repair: bool = True, **kwargs: object) -> PackageStore:
        """Open an existing store; ``repair`` brings the index in line with the files."""
        root = Path(root)
        marker = root / STORE_MARKER
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise StoreError(
                f"{root} is not a store (run `viano store init`)", code="store.not_initialized"
            ) from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"store marker unreadable: {exc}", code="store.corrupt") from None
        if info.get("format") != STORE_FORMAT or info.get("version") != STORE_VERSION:
            raise StoreError(f"unsupported store format {info!r}", code="store.unsupported")
        store = cls(root, **kwargs)  # type: ignore[arg-type]
        with store._db() as db:
            db.executescript(_SCHEMA)
        if repair:
            store.repair()
        return store

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection to the index. While operations of this store run, connections are
        reused (from any thread, one user at a time): opening one costs more than a
        commit, and closing the last one checkpoints the WAL with fsyncs. They are closed
        when the last operation ends, so an idle store holds no connection."""
        with self._pool_lock:
            conn = self._idle_connections.pop() if self._idle_connections else None
        if conn is None:
            conn = sqlite3.connect(
                self.root / "index.sqlite",
                timeout=30,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("PRAGMA synchronous=NORMAL")  # see _SCHEMA
        reusable = False
        try:
            yield conn
            reusable = not conn.in_transaction
        finally:
            with self._pool_lock:
                keep = reusable and self._running_operations > 0
                if keep:
                    self._idle_connections.append(conn)
            if not keep:
                conn.close()

    def _operation_started(self) -> None:
        with self._pool_lock:
            self._running_operations += 1

    def _operation_ended(self) -> None:
        with self._pool_lock:
            self._running_operations -= 1
            idle: list[sqlite3.Connection] = []
            if self._running_operations == 0:
                idle, self._idle_connections = self._idle_connections, []
        for conn in idle:
            conn.close()

    # -- paths ------------------------------------------------------------------------------

    def package_dir(self, case_id: str, package_id: str) -> Path:
        check_identity(case_id, "case_id")
        check_identity(package_id, "package_id")
        return self.root / "packages" / case_id / package_id

    def _lock_path(self, case_id: str, package_id: str) -> Path:
        return self.root / "locks" / case_id / f"{package_id}.lock"

    # -- queries ----------------------------------------------------------------------------

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
        with self._db() as db:
            row = db.execute(
                "SELECT p.current_generation, g.sha256, g.size FROM packages p "
                "LEFT JOIN generations g ON g.case_id = p.case_id "
                "AND g.package_id = p.package_id AND g.generation = p.current_generation "
                "WHERE p.case_id=? AND p.package_id=?",
                (case_id, package_id),
            ).fetchone()
        if row is None:
            raise StoreError(
                f"no package {package_id!r} in case {case_id!r}",
                code="store.not_found",
                case_id=case_id,
                package_id=package_id,
            )
        known = None if row[1] is None else (str(row[1]), int(row[2]))
        return self._open_generation(case_id, package_id, int(row[0]), known)

    def generation(self, case_id: str, package_id: str, generation: int) -> PackageGeneration:
        """A specific generation (old generations stay readable)."""
        found, reader = self._open_generation(case_id, package_id, generation)
        reader.close()
        return found

    def _open_generation(
        self,
        case_id: str,
        package_id: str,
        generation: int,
        known: tuple[str, int] | None = None,
    ) -> tuple[PackageGeneration, PackageReader]:
        """A reader on generation ``generation`` and its record; ``known`` is its index row
        (sha256, size) when the caller has read it already."""
        path = self.package_dir(case_id, package_id) / generation_file_name(generation)
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
            if known is None:
                with self._db() as db:
                    row = db.execute(
                        "SELECT sha256, size FROM generations WHERE case_id=? AND package_id=? "
                        "AND generation=?",
                        (case_id, package_id, generation),
                    ).fetchone()
                known = None if row is None else (str(row[0]), int(row[1]))
            sha, size = _file_sha256(path) if known is None else known
        except BaseException:
            reader.close()
            raise
        found = PackageGeneration(case_id, package_id, generation, path, sha, size, manifest)
        return found, reader

    def generations(self, case_id: str, package_id: str) -> list[int]:
        """Numbers of all generation files of a package, ascending."""
        folder = self.package_dir(case_id, package_id)
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(int(m.group(1)) for name in names if (m := _GEN_RE.match(name)))

    def list_packages(self) -> list[dict[str, object]]:
        """Index rows of every package (case_id, package_id, generation, revision, phase)."""
        with self._db() as db:
            rows = db.execute(
                "SELECT case_id, package_id, current_generation, analysis_revision, phase "
                "FROM packages ORDER BY case_id, package_id"
            ).fetchall()
        return [
            {
                "case_id": r[0],
                "package_id": r[1],
                "package_generation": r[2],
                "analysis_revision": r[3],
                "phase": r[4],
            }
            for r in rows
        ]

    def list_cases(self) -> list[str]:
        with self._db() as db:
            return [str(r[0]) for r in db.execute("SELECT case_id FROM cases ORDER BY case_id")]

    # -- operations -------------------------------------------------------------------------

    def lock(self, case_id: str, package_id: str) -> PackageOperation:
        """Exclusive operation on one (case, package): ``with store.lock(c, p) as op:``.

        Raises LockBusy at once if another operation holds it."""
        self.package_dir(case_id, package_id)  # validates identities
        return PackageOperation(self, case_id, package_id)

    def add(
        self,
        package_path: str | Path,
        *,
        replace_inputs: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
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
            _check_references(reader, manifest)
        sha, _ = _file_sha256(path)
        with self.lock(manifest.case_id, manifest.package_id) as op:
            existing = self.generations(manifest.case_id, manifest.package_id)
            for number in existing:
                gen = self.generation(manifest.case_id, manifest.package_id, number)
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
                    f"{manifest.case_id}/{manifest.package_id} already exists with other content",
                    code="store.package_exists",
                    case_id=manifest.case_id,
                    package_id=manifest.package_id,
                )
            return op._publish_file(path, manifest), "added"

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

    # -- repair ---------------------------------------------------------------------------

    def repair(self) -> list[str]:
        """Make the index match the generation files; returns what was changed.

        For each package whose lock is free: temporary files are removed, the highest
        generation file that opens and whose manifest matches its folder and number is
        current, invalid higher ones are moved to ``quarantine/``. Packages whose lock is
        held are skipped (their operation updates the index itself)."""
        changes: list[str] = []
        packages_root = self.root / "packages"
        if not packages_root.is_dir():
            return changes
        indexed = {
            (str(p["case_id"]), str(p["package_id"])): int(p["package_generation"])  # type: ignore[call-overload]
            for p in self.list_packages()
        }
        seen: set[tuple[str, str]] = set()
        for case_dir in sorted(packages_root.iterdir()):
            if not case_dir.is_dir():
                continue
            for pkg_dir in sorted(case_dir.iterdir()):
                if not pkg_dir.is_dir():
                    continue
                key = (case_dir.name, pkg_dir.name)
                seen.add(key)
                numbers = self.generations(*key)
                needs = indexed.get(key) != (numbers[-1] if numbers else None) or any(
                    p.name.startswith(".tmp-") for p in pkg_dir.iterdir()
                )
                if not needs:
                    continue
                try:
                    with self.lock(*key) as op:
                        changes.extend(op._repair())
                except StoreError:
                    continue
        for key in set(indexed) - seen:
            with self._db() as db:
                db.execute("DELETE FROM packages WHERE case_id=? AND package_id=?", key)
            changes.append(f"dropped index row of missing package {key[0]}/{key[1]}")
        return changes

    def _crash_point(self, step: str) -> None:
        if self._crash_at == step:
            os._exit(CRASH_EXIT_STATUS)
        if self._crash_hook is not None:
            self._crash_hook(step)


def _check_references(reader: PackageReader, manifest: Manifest) -> None:
    for pointer, member in manifest.pointers.items():
        if member not in reader:
            raise PackageError(
                f"pointer {pointer!r} names missing member {member!r}",
                code="package.dangling_pointer",
            )
    for cp in manifest.checkpoints:
        if cp.path not in reader:
            raise PackageError(
                f"checkpoint {cp.name!r} names missing member {cp.path!r}",
                code="package.dangling_pointer",
            )


class PackageOperation:
    """An exclusive operation on one (case, package), from ``store.lock(...)``.

    Inside ``with``: :meth:`current`, :meth:`publish` (write the next generation from a
    :class:`PackageWriter` whose base is the current generation)."""

    def __init__(self, store: PackageStore, case_id: str, package_id: str) -> None:
        self.store = store
        self.case_id = case_id
        self.package_id = package_id
        self._lock = OperationLock(store._lock_path(case_id, package_id), f"{case_id}/{package_id}")

    def __enter__(self) -> PackageOperation:
        self._lock.acquire()
        self.store._operation_started()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.store._operation_ended()
        finally:
            self._lock.release()

    def _require_lock(self) -> None:
        if not self._lock.held:
            raise StoreError("operation used outside its `with` block", code="store.not_locked")

    def current(self) -> PackageGeneration:
        return self.store.current(self.case_id, self.package_id)

    def open_current(self) -> tuple[PackageGeneration, PackageReader]:
        """The current generation and an open reader on it (close it)."""
        return self.store.open_current(self.case_id, self.package_id)

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
        generations = self.store.generations(self.case_id, self.package_id)
        latest = generations[-1] if generations else 0
        if manifest.package_generation != latest + 1:
            raise StoreError(
                f"generation {manifest.package_generation} does not follow {latest}",
                code="store.generation_conflict",
            )
        folder = self.store.package_dir(self.case_id, self.package_id)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tmp-{secrets.token_hex(8)}.zip"
        try:
            with open(tmp, "xb") as f:
                spool = Spool(f)
                writer.write(spool)  # type: ignore[arg-type]  # the file methods zipfile uses
                known = spool.finish()
                self.store._crash_point("temp_written")
                f.flush()
                # a large file is hashed in the background while it is fsynced
                hashing = None if known else background_pool().submit(_file_sha256, tmp)
                os.fsync(f.fileno())
            self.store._crash_point("temp_fsynced")
            if known is None:
                assert hashing is not None
                known = hashing.result()
            return self._link_and_index(tmp, manifest, known)
        finally:
            tmp.unlink(missing_ok=True)

    def _publish_file(self, source: Path, manifest: Manifest) -> PackageGeneration:
        """Copy an already validated package file in as its manifest's generation."""
        self._require_lock()
        folder = self.store.package_dir(self.case_id, self.package_id)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tmp-{secrets.token_hex(8)}.zip"
        try:
            with open(source, "rb") as src, open(tmp, "xb") as f:
                shutil.copyfileobj(src, f, CHUNK)
                self.store._crash_point("temp_written")
                f.flush()
                os.fsync(f.fileno())
            self.store._crash_point("temp_fsynced")
            generation, reader = self._link_and_index(tmp, manifest, _file_sha256(tmp))
            reader.close()
            return generation
        finally:
            tmp.unlink(missing_ok=True)

    def _link_and_index(
        self,
        tmp: Path,
        manifest: Manifest,
        digest: tuple[str, int],
    ) -> tuple[PackageGeneration, PackageReader]:
        """Validate the written file, link it as its generation, fsync the folder, index
        it. Returns the validating reader, still open (same file: the link keeps it)."""
        reader = PackageReader(tmp, limits=self.store.limits)
        try:
            generation = self._link_validated(tmp, manifest, reader, digest)
        except BaseException:
            reader.close()
            raise
        reader.path = generation.path
        return generation, reader

    def _link_validated(
        self,
        tmp: Path,
        manifest: Manifest,
        reader: PackageReader,
        digest: tuple[str, int],
    ) -> PackageGeneration:
        store = self.store
        written = reader.require_manifest()
        if written != manifest:
            raise PackageError(
                "written manifest differs from the intended one", code="package.corrupt"
            )
        sha, size = digest  # of the written bytes
        folder = tmp.parent
        final = folder / generation_file_name(manifest.package_generation)
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise StoreError(
                f"{final.name} already exists; generation files are never replaced",
                code="store.generation_conflict",
            ) from None
        tmp.unlink()
        store._crash_point("renamed")
        fsync_folder(folder)
        store._crash_point("dir_fsynced")
        gen = PackageGeneration(
            self.case_id, self.package_id, manifest.package_generation, final, sha, size, manifest
        )
        self._index(gen)
        store._crash_point("index_updated")
        return gen

    def _index(self, gen: PackageGeneration) -> None:
        now = _now()
        with self.store._index_write_lock, self.store._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT OR IGNORE INTO cases(case_id, created_at) VALUES (?, ?)",
                    (gen.case_id, now),
                )
                db.execute(
                    "INSERT OR REPLACE INTO generations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        gen.case_id,
                        gen.package_id,
                        gen.generation,
                        gen.analysis_revision,
                        gen.phase,
                        gen.sha256,
                        gen.size,
                        now,
                    ),
                )
                db.execute(
                    "INSERT INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(case_id, package_id) DO UPDATE SET "
                    "current_generation=excluded.current_generation, "
                    "analysis_revision=excluded.analysis_revision, phase=excluded.phase, "
                    "sha256=excluded.sha256, size=excluded.size, updated_at=excluded.updated_at "
                    "WHERE excluded.current_generation >= packages.current_generation",
                    (
                        gen.case_id,
                        gen.package_id,
                        gen.generation,
                        gen.analysis_revision,
                        gen.phase,
                        gen.sha256,
                        gen.size,
                        now,
                    ),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _repair(self) -> list[str]:
        store = self.store
        changes: list[str] = []
        folder = store.package_dir(self.case_id, self.package_id)
        for p in folder.iterdir():
            if p.name.startswith(".tmp-"):
                p.unlink()
                changes.append(f"removed temporary file {p}")
        for number in reversed(store.generations(self.case_id, self.package_id)):
            path = folder / generation_file_name(number)
            try:
                with PackageReader(path, limits=store.limits) as reader:
                    m = reader.require_manifest()
                ok = (m.case_id, m.package_id, m.package_generation) == (
                    self.case_id,
                    self.package_id,
                    number,
                )
            except PackageError:
                ok = False
            if not ok:
                target = (
                    store.root / "quarantine" / f"{self.case_id}--{self.package_id}--{path.name}"
                )
                os.replace(path, target)
                changes.append(f"quarantined invalid {path} -> {target}")
                continue
            sha, size = _file_sha256(path)
            gen = PackageGeneration(self.case_id, self.package_id, number, path, sha, size, m)
            with store._db() as db:
                db.execute(
                    "DELETE FROM packages WHERE case_id=? AND package_id=?",
                    (self.case_id, self.package_id),
                )
            self._index(gen)
            changes.append(f"{self.case_id}/{self.package_id}: current generation {number}")
            return changes
        with store._db() as db:
            db.execute(
                "DELETE FROM packages WHERE case_id=? AND package_id=?",
                (self.case_id, self.package_id),
            )
        return changes
