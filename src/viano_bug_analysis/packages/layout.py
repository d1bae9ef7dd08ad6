"""Where a package store keeps its files (docs/package-format.md, "Store").

::

    DIR/viano-store.json                        marker {"format": "viano-store", ...}
    DIR/index.sqlite                            cases, packages, generations (derived)
    DIR/locks/<case_id>/<package_id>.lock       operation locks (fcntl.flock)
    DIR/packages/<case_id>/<package_id>/gen-000001.zip   immutable generation files
    DIR/quarantine/                             generation files that failed validation,
                                                each with a typed report <name>.json

The store never follows a symbolic link inside its own tree (ADR 0100): every path it
opens, creates, moves or removes below ``DIR`` passes :meth:`StoreLayout.checked`, an
``lstat`` of each part below ``DIR``, and lock files are opened with ``O_NOFOLLOW``.
``DIR`` itself may be a link (the user chose it). A link planted by someone who can
write into the store *while* an operation runs can still race the check; the threat
this closes is a link left in the tree before a command runs.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from viano_bug_analysis.errors import StoreError
from viano_bug_analysis.packages.format import IDENTITY_RE, check_identity

STORE_MARKER = "viano-store.json"
INDEX_FILE = "index.sqlite"
TEMPORARY_PREFIX = ".tmp-"
_GEN_RE = re.compile(r"^gen-(\d{6,})\.zip$")


def generation_file_name(generation: int) -> str:
    return f"gen-{generation:06d}.zip"


def read_store_file(path: Path, limit: int) -> bytes:
    """A small file of the store itself (the marker): never through a link, never a
    FIFO or device, at most ``limit`` bytes (OSError or ValueError otherwise)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with open(fd, "rb", buffering=0) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path} is larger than {limit} bytes")
    return data


def is_link(path: Path) -> bool:
    """Whether ``path`` is a symbolic link (never follows it)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


@dataclass(frozen=True)
class StoreLayout:
    root: Path

    def checked(self, path: Path) -> Path:
        """``path`` (below the root) after an ``lstat`` of each of its parts below the
        root: StoreError ``store.symlink`` when one is a symbolic link. Parts that do not
        exist yet end the check (what an operation creates there is made with
        ``O_EXCL``/``O_NOFOLLOW`` or ``mkdir``, neither of which follows a link)."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            raise StoreError(f"{path} is outside the store", code="store.outside") from None
        current = self.root
        for part in parts:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except (FileNotFoundError, NotADirectoryError):
                break
            if stat.S_ISLNK(mode):
                raise StoreError(
                    f"{current} is a symbolic link; a store never follows one",
                    code="store.symlink",
                    path=str(current),
                )
        return path

    @property
    def marker(self) -> Path:
        return self.checked(self.root / STORE_MARKER)

    @property
    def index(self) -> Path:
        index = self.root / INDEX_FILE
        for suffix in ("-wal", "-shm", "-journal"):  # SQLite opens these by name too
            self.checked(index.with_name(INDEX_FILE + suffix))
        return self.checked(index)

    @property
    def packages(self) -> Path:
        return self.checked(self.root / "packages")

    @property
    def locks(self) -> Path:
        return self.checked(self.root / "locks")

    @property
    def quarantine(self) -> Path:
        return self.checked(self.root / "quarantine")

    def package_dir(self, case_id: str, package_id: str) -> Path:
        """The folder of a package's generation files (checks both identities, and that
        no part of it is a link)."""
        check_identity(case_id, "case_id")
        check_identity(package_id, "package_id")
        return self.checked(self.root / "packages" / case_id / package_id)

    def lock_path(self, case_id: str, package_id: str) -> Path:
        check_identity(case_id, "case_id")
        check_identity(package_id, "package_id")
        return self.checked(self.root / "locks" / case_id / f"{package_id}.lock")

    def generation_path(self, case_id: str, package_id: str, generation: int) -> Path:
        return self.checked(
            self.package_dir(case_id, package_id) / generation_file_name(generation)
        )

    def generations(self, case_id: str, package_id: str) -> list[int]:
        """Numbers of all generation files of a package, ascending."""
        try:
            names = os.listdir(self.package_dir(case_id, package_id))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(
            int(m.group(1))
            for name in names
            if (m := _GEN_RE.match(name)) and name == generation_file_name(int(m.group(1)))
        )

    def package_folders(self) -> list[tuple[str, str]]:
        """(case_id, package_id) of every package folder on disk, sorted. Links and
        entries whose names are no identity are left out (see :meth:`strays`)."""
        return self._folders()[0]

    def strays(self) -> list[Path]:
        """Entries of ``packages/`` that are no package folder: links, files, names
        that are no identity. Repair reports them and never follows or removes them."""
        return self._folders()[1]

    def _folders(self) -> tuple[list[tuple[str, str]], list[Path]]:
        packages = self.packages
        found: list[tuple[str, str]] = []
        strays: list[Path] = []
        for case_dir in _entries(packages):
            if not _plain_dir(case_dir) or not IDENTITY_RE.match(case_dir.name):
                strays.append(case_dir)
                continue
            for pkg_dir in _entries(case_dir):
                if not _plain_dir(pkg_dir) or not IDENTITY_RE.match(pkg_dir.name):
                    strays.append(pkg_dir)
                    continue
                found.append((case_dir.name, pkg_dir.name))
        return found, strays


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _plain_dir(path: Path) -> bool:
    """A directory that is not a link (``lstat``)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
