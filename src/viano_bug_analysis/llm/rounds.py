"""Where gateway rounds live in a package, and how an attempt is identified.

An *attempt* is one ``attempt_id`` within one interpretation (case, package, analysis
revision, interpretation index). Its ``attempt_hash`` names its files::

    analysis/interpretations/NNNN/rounds/<attempt-hash>/0001.json   one per dispatch
    analysis/interpretations/NNNN/errors/<attempt-hash>.json        rejection / error report
    analysis/interpretations/NNNN/resumptions/<attempt-hash>.json   explicit resumption

The hash covers the identities only (not the fingerprints), so a changed configuration
under the same attempt_id is detected as a mismatch instead of silently starting over.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.packages import canonical_json, interpretation_dir

ROUND_FORMAT = "viano-llm-round-v1"
ATTEMPT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
_ROUND_RE = re.compile(r"/rounds/(?P<hash>[0-9a-f]{64})/(?P<n>\d{4,})\.json$")


def attempt_hash(
    *, case_id: str, package_id: str, analysis_revision: int, index: int, attempt_id: str
) -> str:
    material = {
        "attempt_id": attempt_id,
        "analysis_revision": analysis_revision,
        "case_id": case_id,
        "interpretation_index": index,
        "package_id": package_id,
    }
    return hashlib.sha256(canonical_json(material)).hexdigest()


@dataclass(frozen=True, slots=True)
class InterpretationLayout:
    """Member names of one interpretation (``analysis/interpretations/NNNN/``)."""

    index: int

    @property
    def base(self) -> str:
        return interpretation_dir(self.index)

    @property
    def context(self) -> str:
        return self.base + "context.json"

    @property
    def accepted(self) -> str:
        return self.base + "case_interpretation.json"

    @property
    def summary(self) -> str:
        return self.base + "case_interpretation.md"

    @property
    def interpreting_checkpoint(self) -> str:
        return self.base + "checkpoints/case-interpreting.json"

    @property
    def interpreted_checkpoint(self) -> str:
        return self.base + "checkpoints/case-interpreted.json"

    def round(self, attempt_hash: str, number: int) -> str:
        return f"{self.base}rounds/{attempt_hash}/{number:04d}.json"

    def error_report(self, attempt_hash: str) -> str:
        return f"{self.base}errors/{attempt_hash}.json"

    def resumption(self, attempt_hash: str) -> str:
        return f"{self.base}resumptions/{attempt_hash}.json"

    def rounds_prefix(self) -> str:
        return f"{self.base}rounds/"


@dataclass(frozen=True, slots=True)
class AttemptKey:
    """Who an attempt is and what it sends: retries share all of it."""

    attempt_id: str
    attempt_hash: str
    request_fingerprint: str
    configuration_fingerprint: str


def rounds_of(names: list[str], layout: InterpretationLayout) -> dict[str, list[str]]:
    """Round members by attempt hash, each list in round order."""
    out: dict[str, list[tuple[int, str]]] = {}
    prefix = layout.rounds_prefix()
    for name in names:
        if not name.startswith(prefix):
            continue
        match = _ROUND_RE.search(name)
        if match:
            out.setdefault(match.group("hash"), []).append((int(match.group("n")), name))
    return {h: [n for _, n in sorted(items)] for h, items in out.items()}


def load_json(data: bytes) -> dict[str, Any]:
    obj = json.loads(data.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj
