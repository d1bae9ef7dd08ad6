"""CaseBuilder and the canonical case (see docs/package-format.md, "Canonical case")."""

from viano_bug_analysis.case.builder import (
    CANONICAL_CASE_FILE,
    LATER_PHASE_POINTERS,
    BuildResult,
    CaseBuilder,
    canonical_case_path,
    case_built_checkpoint_path,
    read_case_built,
)
from viano_bug_analysis.case.canonical import (
    CASE_FORMAT,
    CanonicalCase,
    build_canonical_case,
    load_canonical_case,
    raw_input_fingerprint,
)
from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.case.records import KINDS, ORDER

__all__ = [
    "CANONICAL_CASE_FILE",
    "CASE_FORMAT",
    "KINDS",
    "LATER_PHASE_POINTERS",
    "ORDER",
    "BuildResult",
    "CanonicalCase",
    "CaseBuilder",
    "CaseBuilderLimits",
    "build_canonical_case",
    "canonical_case_path",
    "case_built_checkpoint_path",
    "load_canonical_case",
    "raw_input_fingerprint",
    "read_case_built",
]
