"""Where a package store keeps its files (docs/package-format.md, "Store").

::

    DIR/viano-store.json                        marker {"format": "viano-store", ...}
    DIR/index.sqlite                            cases, packages, generations (derived)
    DIR/locks/<case_id>/<package_id>.lock       operation locks (fcntl.flock)
    DIR/packages/<case_id>/<package_id>/gen-000001.zip   immutable generation files
    DIR/quarantine/                             generation files that failed validation
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from viano_bug_analysis.packages.format import check_identity

STORE_MARKER = "viano-store.json"
INDEX_FILE = "index.sqlite"
TEMPORARY_PREFIX = ".tmp-"
_GEN_RE = re.compile(r"^gen-(\d{6,})\.zip$")


def generation_file_name(generation: int) -> str:
    return f"gen-{generation:06d}.zip"


@dataclass(frozen=True)
class StoreLayout:
    root: Path

    @property
    def marker(self) -> Path:
        return self.root / STORE_MARKER

    @property
    def index(self) -> Path:
        return self.root / INDEX_FILE

    @property
    def packages(self) -> Path:
        return self.root / "packages"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    def package_dir(self, case_id: str, package_id: str) -> Path:
        """The folder of a package's generation files (checks both identities)."""
        check_identity(case_id, "case_id")
        check_identity(package_id, "package_id")
        return self.packages / case_id / package_id

    def lock_path(self, case_id: str, package_id: str) -> Path:
        return self.root / "locks" / case_id / f"{package_id}.lock"

    def generation_path(self, case_id: str, package_id: str, generation: int) -> Path:
        return self.package_dir(case_id, package_id) / generation_file_name(generation)

    def generations(self, case_id: str, package_id: str) -> list[int]:
        """Numbers of all generation files of a package, ascending."""
        try:
            names = os.listdir(self.package_dir(case_id, package_id))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(int(m.group(1)) for name in names if (m := _GEN_RE.match(name)))

    def package_folders(self) -> list[tuple[str, str]]:
        """(case_id, package_id) of every package folder on disk, sorted."""
        if not self.packages.is_dir():
            return []
        return [
            (case_dir.name, pkg_dir.name)
            for case_dir in sorted(self.packages.iterdir())
            if case_dir.is_dir()
            for pkg_dir in sorted(case_dir.iterdir())
            if pkg_dir.is_dir()
        ]
