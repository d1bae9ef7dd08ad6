"""Repair: bring a store's index in line with its generation files (ADR 0020).

For each package whose lock is free: temporary files are removed, the highest generation
file that opens and whose manifest matches its folder and number is current, invalid
higher ones are moved to ``quarantine/``. Packages whose lock is held are skipped (their
operation updates the index itself); index rows of packages without a folder are
dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from viano_bug_analysis.errors import PackageError, StoreError
from viano_bug_analysis.packages.generations import GenerationFiles, PackageGeneration, file_sha256
from viano_bug_analysis.packages.layout import TEMPORARY_PREFIX
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
    changes: list[str] = []
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
    layout, index, limits = op.files.layout, op.files.index, op.files.limits
    case_id, package_id = op.case_id, op.package_id
    changes: list[str] = []
    folder = layout.package_dir(case_id, package_id)
    for p in folder.iterdir():
        if p.name.startswith(TEMPORARY_PREFIX):
            p.unlink()
            changes.append(f"removed temporary file {p}")
    for number in reversed(layout.generations(case_id, package_id)):
        path = layout.generation_path(case_id, package_id, number)
        try:
            with PackageReader(path, limits=limits) as reader:
                m = reader.require_manifest()
            ok = (m.case_id, m.package_id, m.package_generation) == (case_id, package_id, number)
        except PackageError:
            ok = False
        if not ok:
            target = layout.quarantine / f"{case_id}--{package_id}--{path.name}"
            os.replace(path, target)
            changes.append(f"quarantined invalid {path} -> {target}")
            continue
        sha, size = file_sha256(path)
        index.forget(case_id, package_id)
        op.index(PackageGeneration(case_id, package_id, number, path, sha, size, m))
        changes.append(f"{case_id}/{package_id}: current generation {number}")
        return changes
    index.forget(case_id, package_id)
    return changes
