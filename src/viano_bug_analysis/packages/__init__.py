"""Bug-report packages: not Python packages. A Viano *package* is a ZIP file holding one
case's raw inputs and its analysis history, in immutable generations (see
docs/package-format.md). This folder holds the package format v1, safe reading, the
generation writer and the package store (``store.py``, with its parts ``layout``,
``index``, ``generations``, ``publication`` and ``repair``).

Public API (see docs/package-format.md)::

    from viano_bug_analysis.packages import PackageStore, PackageWriter

    store = PackageStore.open("STORE")
    with store.lock(case_id, package_id) as op:      # LockBusy if another holds it
        gen = op.current()                            # PackageGeneration
        with gen.open() as reader:                    # PackageReader
            manifest = reader.require_manifest()
            data = reader.read(manifest.pointers["canonical_case"])
            writer = PackageWriter(reader)            # generation N+1
            writer.add_bytes("analysis/interpretations/0001/context.json", b"...")
            writer.set_pointer("interpretation_context",
                               "analysis/interpretations/0001/context.json")
            writer.add_checkpoint("case-interpreting",
                                  "analysis/interpretations/0001/checkpoints/case-interpreting.json",
                                  {...})
            new_gen = op.publish(writer)              # atomic; crash-safe
"""

from viano_bug_analysis.packages.canonical import canonical_json, canonical_sha256, sha256_hex
from viano_bug_analysis.packages.format import (
    ANALYSIS_PREFIX,
    CHECKPOINT_CASE_BUILT,
    FORMAT_VERSION,
    INTERPRETATIONS_PREFIX,
    MANIFEST_NAME,
    ORIGINAL_PREFIX,
    PHASE_CASE_BUILT,
    PHASE_INTERPRETING_CASE,
    PHASE_SUPPLIED,
    POINTER_CANONICAL_CASE,
    POINTER_CASE_INTERPRETATION,
    POINTER_CASE_INTERPRETATION_SUMMARY,
    POINTER_INTERPRETATION_CONTEXT,
    REVISIONS_PREFIX,
    Checkpoint,
    Manifest,
    PackageLimits,
    interpretation_dir,
    revision_dir,
)
from viano_bug_analysis.packages.generations import PackageGeneration
from viano_bug_analysis.packages.publication import CRASH_ENV, PUBLISH_STEPS, PackageOperation
from viano_bug_analysis.packages.reader import PackageReader
from viano_bug_analysis.packages.store import PackageStore
from viano_bug_analysis.packages.writer import PackageWriter

__all__ = [
    "ANALYSIS_PREFIX",
    "CHECKPOINT_CASE_BUILT",
    "CRASH_ENV",
    "FORMAT_VERSION",
    "INTERPRETATIONS_PREFIX",
    "MANIFEST_NAME",
    "ORIGINAL_PREFIX",
    "PHASE_CASE_BUILT",
    "PHASE_INTERPRETING_CASE",
    "PHASE_SUPPLIED",
    "POINTER_CANONICAL_CASE",
    "POINTER_CASE_INTERPRETATION",
    "POINTER_CASE_INTERPRETATION_SUMMARY",
    "POINTER_INTERPRETATION_CONTEXT",
    "PUBLISH_STEPS",
    "REVISIONS_PREFIX",
    "Checkpoint",
    "Manifest",
    "PackageGeneration",
    "PackageLimits",
    "PackageOperation",
    "PackageReader",
    "PackageStore",
    "PackageWriter",
    "canonical_json",
    "canonical_sha256",
    "interpretation_dir",
    "revision_dir",
    "sha256_hex",
]
