"""Shared helpers for the Viano package/store/case tests."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from viano_bug_analysis.packages import Manifest, PackageReader, PackageWriter

INTAKE: dict[str, Any] = {
    "intake_format": "viano-intake/1",
    "case_id": "demo-case",
    "title": "Export button does nothing on the reports page",
    "summary": "Clicking Export in version 2.3.1 produces no file.",
    "reporter": {"name": "rita", "timestamp": "2024-05-01T10:00:00Z"},
    "created_at": "2024-05-01T10:00:00Z",
    "environment": {"os": "Debian 12", "app": "reports-ui 2.3.1"},
    "observations": ["After clicking Export the spinner stops and no CSV is downloaded."],
    "expected_behavior": [{"text": "A CSV file with the visible rows is downloaded."}],
    "steps": ["Open /reports", "Click Export"],
    "comments": [
        {
            "author": "tom",
            "timestamp": "2024-05-02T09:00:00Z",
            "text": "I think the export endpoint times out for large tables.",
        },
        {"author": "ana", "timestamp": "2024-05-02T10:00:00Z", "text": "   "},
    ],
    "tester_hypotheses": [{"author": "tom", "text": "Maybe the worker queue is full."}],
    "facts": [
        {"name": "http_status", "value": "504"},
        {
            "name": "server log",
            "value_ref": {
                "member": "original/attachments/server.log",
                "kind": "log",
                "media_type": "text/plain",
            },
        },
    ],
    "references": [
        {
            "kind": "external_research",
            "uri": "https://example.org/csv-spec",
            "description": "CSV export conventions",
        }
    ],
}


def write_package(
    path: Path,
    files: dict[str, bytes],
    *,
    case_id: str = "demo-case",
    package_id: str = "supplied",
    inputs: tuple[dict[str, Any], ...] | None = None,
) -> Path:
    """A first-generation package holding ``files`` (names include original/...)."""
    if inputs is None:
        inputs = ({"member": "original/intake.json", "format": "viano-intake"},)
    writer = PackageWriter.new(Manifest(package_id=package_id, case_id=case_id, inputs=inputs))
    for name, data in files.items():
        writer.add_bytes(name, data)
    with open(path, "wb") as f:
        writer.write(f)
    return path


def intake_package(
    path: Path, intake: dict[str, Any] | None = None, extra: dict[str, bytes] | None = None
) -> Path:
    files = {"original/intake.json": json.dumps(intake or INTAKE).encode()}
    files["original/attachments/server.log"] = b"ERROR worker timeout\n" * 50
    files.update(extra or {})
    return write_package(path, files, case_id=(intake or INTAKE).get("case_id", "demo-case"))


def raw_zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    """A ZIP written with zipfile directly (for hostile packages)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in entries:
            z.writestr(info, data)
    return path


def members(path: Path) -> dict[str, bytes]:
    with PackageReader(path) as reader:
        return {n: reader.read(n) for n in reader.files()}


def manifest_bytes(**fields: Any) -> bytes:
    base: dict[str, Any] = {
        "format": "viano-package",
        "format_version": 1,
        "package_id": "supplied",
        "case_id": "demo-case",
        "package_generation": 1,
        "analysis_revision": 0,
        "phase": "SUPPLIED",
        "pointers": {},
        "checkpoints": [],
        "inputs": [],
        "source": {},
    }
    base.update(fields)
    return json.dumps(base).encode()
