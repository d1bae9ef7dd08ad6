"""CaseBuilder: confirm an analysis revision of a package in the store.

``CaseBuilder(store, limits).build(case_id, package_id)`` takes the package's operation
lock, computes the raw-input fingerprint of the current generation and

- returns status ``"unchanged"`` when the latest ``case-built`` checkpoint of the current
  analysis revision has the same fingerprint (idempotent: no new generation);
- otherwise builds the canonical case and publishes ONE new generation holding
  ``analysis/revisions/NNNN/canonical_case.json``, the checkpoint file
  ``analysis/revisions/NNNN/checkpoints/case-built.json``, the manifest pointer
  ``canonical_case``, ``analysis_revision = NNNN`` and phase ``CASE_BUILT`` (status
  ``"built"``). Pointers of later phases (interpretation) are removed from the manifest
  because they belong to the previous revision; their files stay in the package.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from viano_bug_analysis.case.canonical import (
    CASE_FORMAT,
    Progress,
    build_canonical_case,
    raw_input_fingerprint,
)
from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.errors import CaseBuildError
from viano_bug_analysis.packages.format import (
    CHECKPOINT_CASE_BUILT,
    PHASE_CASE_BUILT,
    POINTER_CANONICAL_CASE,
    POINTER_CASE_INTERPRETATION,
    POINTER_CASE_INTERPRETATION_SUMMARY,
    POINTER_INTERPRETATION_CONTEXT,
    REVISIONS_PREFIX,
    revision_dir,
)
from viano_bug_analysis.packages.reader import PackageReader
from viano_bug_analysis.packages.store import PackageStore
from viano_bug_analysis.packages.writer import PackageWriter

CANONICAL_CASE_FILE = "canonical_case.json"
LATER_PHASE_POINTERS = (
    POINTER_INTERPRETATION_CONTEXT,
    POINTER_CASE_INTERPRETATION,
    POINTER_CASE_INTERPRETATION_SUMMARY,
)
CASE_BUILT_CHECKPOINT_FILE = "checkpoints/case-built.json"
_REV = re.compile(r"^analysis/revisions/(\d{4,})/")


def canonical_case_path(revision: int) -> str:
    return revision_dir(revision) + CANONICAL_CASE_FILE


def case_built_checkpoint_path(revision: int) -> str:
    return revision_dir(revision) + CASE_BUILT_CHECKPOINT_FILE


@dataclass(frozen=True)
class BuildResult:
    status: str  # built | unchanged
    case_id: str
    package_id: str
    package_generation: int
    analysis_revision: int
    case_sha256: str
    raw_input_fingerprint: str
    record_counts: dict[str, int]

    def to_json(self) -> dict[str, object]:
        return {
            "status": self.status,
            "case_id": self.case_id,
            "package_id": self.package_id,
            "package_generation": self.package_generation,
            "analysis_revision": self.analysis_revision,
            "case_sha256": self.case_sha256,
            "raw_input_fingerprint": self.raw_input_fingerprint,
            "record_counts": self.record_counts,
        }


def read_case_built(reader: PackageReader) -> dict[str, object] | None:
    """The ``case-built`` checkpoint of the manifest's current analysis revision, if any.

    The returned dict has ``raw_input_fingerprint``, ``case_sha256``,
    ``canonical_case`` (member name), ``analysis_revision``, ``package_generation``."""
    manifest = reader.require_manifest()
    entry = manifest.latest_checkpoint(CHECKPOINT_CASE_BUILT)
    if entry is None or entry.analysis_revision != manifest.analysis_revision:
        return None
    data = json.loads(reader.read(entry.path, max_bytes=1 << 20))
    return data if isinstance(data, dict) else None


class CaseBuilder:
    def __init__(self, store: PackageStore, limits: CaseBuilderLimits | None = None) -> None:
        self.store = store
        self.limits = limits or CaseBuilderLimits()

    def build(self, case_id: str, package_id: str, progress: Progress | None = None) -> BuildResult:
        with self.store.lock(case_id, package_id) as op:
            current = op.current()
            with current.open(self.store.limits) as reader:
                manifest = reader.require_manifest()
                checkpoint = read_case_built(reader)
                if checkpoint is not None and manifest.pointers.get(POINTER_CANONICAL_CASE):
                    fingerprint = raw_input_fingerprint(reader, self.limits)
                    if checkpoint.get("raw_input_fingerprint") == fingerprint:
                        counts = checkpoint.get("record_counts")
                        return BuildResult(
                            "unchanged",
                            case_id,
                            package_id,
                            current.generation,
                            manifest.analysis_revision,
                            str(checkpoint.get("case_sha256")),
                            fingerprint,
                            dict(counts) if isinstance(counts, dict) else {},
                        )
                existing = [
                    int(m.group(1))
                    for n in reader.names()
                    if (m := _REV.match(n)) and n.startswith(REVISIONS_PREFIX)
                ]
                revision = max([manifest.analysis_revision, *existing]) + 1
                case = build_canonical_case(reader, revision, self.limits, progress)
                if case.document["case_id"] != case_id:
                    raise CaseBuildError("manifest case_id changed", code="case.identity")
                writer = PackageWriter(reader)
                writer.update_manifest(analysis_revision=revision, phase=PHASE_CASE_BUILT)
                writer.clear_pointers(LATER_PHASE_POINTERS)
                case_path = canonical_case_path(revision)
                writer.add_bytes(case_path, case.data)
                writer.set_pointer(POINTER_CANONICAL_CASE, case_path)
                counts = case.document["record_counts"]
                writer.add_checkpoint(
                    CHECKPOINT_CASE_BUILT,
                    case_built_checkpoint_path(revision),
                    {
                        "case_format": CASE_FORMAT,
                        "canonical_case": case_path,
                        "case_sha256": case.sha256,
                        "raw_input_fingerprint": case.raw_input_fingerprint,
                        "expected_behavior_completeness": case.document["completeness"][
                            "expected_behavior"
                        ],
                        "record_counts": counts,
                        "builder_limits": self.limits.to_json(),
                    },
                )
                if progress:
                    progress("publish", 0, 1)
                gen = op.publish(writer)
                if progress:
                    progress("publish", 1, 1)
            return BuildResult(
                "built",
                case_id,
                package_id,
                gen.generation,
                revision,
                case.sha256,
                case.raw_input_fingerprint,
                dict(counts),
            )
