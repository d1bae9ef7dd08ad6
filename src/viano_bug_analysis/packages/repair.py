"""Repair: bring a store's index in line with its generation files (ADR 0020).

For each package whose lock is free: temporary files are removed, the highest generation
file that opens and whose manifest matches its folder and number is current, invalid
higher ones are moved to ``quarantine/``. Packages whose lock is held are skipped (their
operation updates the index itself); index rows of packages without a folder are
dropped.

Repair never crashes on a file it cannot index (ADR 0100): whatever goes wrong with one
generation file (it does not open, its manifest does not match, its numbers do not fit
the index, it is a link or no regular file) moves that file to ``quarantine/`` with a
typed report ``<name>.json`` beside it, and repair carries on with the next one. Entries
of ``packages/`` that are links or no package folder are reported and left alone:
repair never follows a link, so nothing outside the store is read, moved or removed.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from modelgate.atomicfile import atomic_write
from viano_bug_analysis.errors import StoreError, VianoError
from viano_bug_analysis.packages.generations import GenerationFiles, PackageGeneration, file_sha256
from viano_bug_analysis.packages.layout import TEMPORARY_PREFIX, StoreLayout, is_link
from viano_bug_analysis.packages.publication import PackageOperation
from viano_bug_analysis.packages.reader import PackageReader


def repair_store(files: GenerationFiles, lock: Callable[[str, str], PackageOperation]) -> list[str]:
    """Repair every package that needs it; returns what was changed."""
    layout, index = files.layout, files.index
    if not layout.packages.is_dir():
        return []
    indexed = {
        (str(p["case_id"]), str(p["package_id"])): p["package_generation"] for p in index.packages()
    }
    changes: list[str] = [
        f"left alone {p}: not a package folder (a link, a file or not an identity)"
        for p in layout.strays()
    ]
    folders = layout.package_folders()
    for key in folders:
        numbers = layout.generations(*key)
        folder = layout.package_dir(*key)
        needs = indexed.get(key) != (numbers[-1] if numbers else None) or any(
            p.name.startswith(TEMPORARY_PREFIX) for p in folder.iterdir()
        )
        if not needs:
            continue
        try:
            with lock(*key) as op:
                changes.extend(repair_package(op))
        except StoreError:
            continue
    for key in sorted(set(indexed) - set(folders)):
        index.forget(*key)
        changes.append(f"dropped index row of missing package {key[0]}/{key[1]}")
    return changes


def repair_package(op: PackageOperation) -> list[str]:
    """Repair one package, under its operation lock ``op``."""
    layout, index = op.files.layout, op.files.index
    case_id, package_id = op.case_id, op.package_id
    changes: list[str] = []
    folder = layout.package_dir(case_id, package_id)
    for p in folder.iterdir():
        if p.name.startswith(TEMPORARY_PREFIX):
            p.unlink()  # a link is removed itself, never what it names
            changes.append(f"removed temporary file {p}")
    for number in reversed(layout.generations(case_id, package_id)):
        path = folder / f"gen-{number:06d}.zip"
        try:
            generation = _indexable(op, number, path)
            index.forget(case_id, package_id)
            op.index(generation)
        except Exception as exc:  # any file it cannot index is quarantined
            target = quarantine(layout, path, case_id, package_id, exc)
            changes.append(f"quarantined {path} -> {target} [{_code(exc)}]")
            continue
        changes.append(f"{case_id}/{package_id}: current generation {number}")
        return changes
    index.forget(case_id, package_id)
    return changes


def _indexable(op: PackageOperation, number: int, path: Path) -> PackageGeneration:
    """Generation ``number`` when it is a regular file whose manifest matches its folder
    and number; else raises (StoreError or PackageError)."""
    layout, limits = op.files.layout, op.files.limits
    mode = os.lstat(path).st_mode
    if not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise StoreError(f"{path.name} is {what}", code="store.not_regular_file")
    layout.checked(path)
    with PackageReader(path, limits=limits) as reader:
        m = reader.require_manifest()
    if (m.case_id, m.package_id, m.package_generation) != (op.case_id, op.package_id, number):
        raise StoreError(
            f"{path.name}'s manifest names {m.case_id}/{m.package_id} generation "
            f"{m.package_generation}",
            code="store.manifest_mismatch",
        )
    sha, size = file_sha256(path)
    return PackageGeneration(op.case_id, op.package_id, number, path, sha, size, m)


def _code(exc: BaseException) -> str:
    return exc.code if isinstance(exc, VianoError) else f"store.unindexable.{type(exc).__name__}"


def quarantine(
    layout: StoreLayout, path: Path, case_id: str, package_id: str, exc: BaseException
) -> Path:
    """Move ``path`` (a link is moved itself) into ``quarantine/`` and write a typed
    report ``<name>.json`` beside it; returns the new path."""
    folder = layout.quarantine
    folder.mkdir(exist_ok=True)
    base = f"{case_id}--{package_id}--{path.name}"
    target = folder / base
    n = 1
    while os.path.lexists(target) or os.path.lexists(f"{target}.json"):
        n += 1
        target = folder / f"{base}.{n}"
    layout.checked(target)
    os.replace(path, target)
    report = {
        "code": _code(exc),
        "message": exc.message if isinstance(exc, VianoError) else str(exc)[:500],
        "case_id": case_id,
        "package_id": package_id,
        "file": path.name,
        "was_link": is_link(target),
    }
    with atomic_write(Path(f"{target}.json")) as f:
        f.write(json.dumps(report, sort_keys=True, indent=2).encode() + b"\n")
    return target
