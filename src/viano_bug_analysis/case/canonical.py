"""Build the canonical case document from a package's raw inputs.

``build_canonical_case(reader, analysis_revision, limits)`` reads the manifest's
``inputs`` (each parsed by its intake format), hashes every ``original/`` member by
streaming (attachments stay unread), and returns a :class:`CanonicalCase`: the record
list, the raw-input fingerprint and the canonical JSON bytes with their SHA-256.

Record shape (all kinds)::

    {"id": "O0001", "kind": "observation", "text": "...",
     "provenance": {"member": "original/issue.json", "json_pointer": "/body",
                    "span": [0, 120], "author": "user_5", "timestamp": "2018-...",
                    "origin": "original", "role": "reporter"},
     ...kind-specific fields}
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from viano_bug_analysis.case.limits import CaseBuilderLimits
from viano_bug_analysis.case.records import RecordSet
from viano_bug_analysis.errors import CaseBuildError, IntakeError, PackageError
from viano_bug_analysis.intake.formats import parser_for
from viano_bug_analysis.intake.model import IntakeDocument
from viano_bug_analysis.packages.canonical import canonical_json, sha256_hex
from viano_bug_analysis.packages.format import ORIGINAL_PREFIX
from viano_bug_analysis.packages.reader import PackageReader

CASE_FORMAT = "viano-canonical-case/1"
RAW_INPUT_FINGERPRINT_VERSION = "viano-raw-input/1"

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CanonicalCase:
    document: dict[str, Any]
    data: bytes  # canonical JSON bytes, exactly as stored in the package
    sha256: str  # case hash: SHA-256 of ``data``
    raw_input_fingerprint: str


def fingerprint_from_hashes(hashes: dict[str, tuple[int, str]]) -> str:
    """Raw-input fingerprint from {member: (size, sha256)} of every original/ file.

    SHA-256 over ``"viano-raw-input/1\\n"`` then, for each member in sorted name order,
    ``name "\\n" size "\\n" sha256-hex "\\n"``: any change of a name or a byte changes it."""
    digest = hashlib.sha256((RAW_INPUT_FINGERPRINT_VERSION + "\n").encode())
    for name in sorted(hashes):
        size, sha = hashes[name]
        digest.update(f"{name}\n{size}\n{sha}\n".encode())
    return digest.hexdigest()


def raw_input_fingerprint(reader: PackageReader, limits: CaseBuilderLimits | None = None) -> str:
    """The current raw-input fingerprint of a package (streams every original/ file)."""
    return fingerprint_from_hashes(hash_originals(reader, limits or CaseBuilderLimits()))


def hash_originals(
    reader: PackageReader,
    limits: CaseBuilderLimits,
    known: dict[str, tuple[int, str]] | None = None,
    progress: Progress | None = None,
) -> dict[str, tuple[int, str]]:
    names = reader.original_files()
    limits.check("max_original_members", len(names))
    limits.check("max_original_bytes", sum(reader.size(n) for n in names))
    out: dict[str, tuple[int, str]] = {}
    for i, name in enumerate(names):
        if known and name in known:
            out[name] = known[name]
        else:
            digest = hashlib.sha256()
            size = 0
            for chunk in reader.iter_chunks(name):
                digest.update(chunk)
                size += len(chunk)
            out[name] = (size, digest.hexdigest())
        if progress:
            progress("hash", i + 1, len(names))
    return out


def declared_inputs(reader: PackageReader) -> list[tuple[str, str]]:
    """(member, format) of the manifest's inputs; a lone ``original/intake.json`` is
    taken as native intake when the manifest declares none."""
    manifest = reader.require_manifest()
    inputs: list[tuple[str, str]] = []
    for entry in manifest.inputs:
        member, fmt = entry.get("member"), entry.get("format")
        if not isinstance(member, str) or not isinstance(fmt, str):
            raise PackageError(
                "each input needs 'member' and 'format'", code="package.manifest_invalid"
            )
        if not member.startswith(ORIGINAL_PREFIX) or member not in reader:
            raise PackageError(
                f"input {member!r} is not a member under original/", code="package.input_missing"
            )
        inputs.append((member, fmt))
    if not inputs and "original/intake.json" in reader:
        inputs.append(("original/intake.json", "viano-intake"))
    if not inputs:
        raise CaseBuildError(
            "the manifest declares no raw input to build from", code="case.no_input"
        )
    return inputs


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Building creates a few objects per record and frees nothing until the end, so
    the cyclic collector's passes over them are pure cost (about a tenth of a large
    build); it is paused for the build and restored as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_canonical_case(
    reader: PackageReader,
    analysis_revision: int,
    limits: CaseBuilderLimits | None = None,
    progress: Progress | None = None,
) -> CanonicalCase:
    with _cyclic_gc_paused():
        return _build_canonical_case(reader, analysis_revision, limits, progress)


def _build_canonical_case(
    reader: PackageReader,
    analysis_revision: int,
    limits: CaseBuilderLimits | None,
    progress: Progress | None,
) -> CanonicalCase:
    limits = limits or CaseBuilderLimits()
    manifest = reader.require_manifest()
    inputs = declared_inputs(reader)
    documents: list[IntakeDocument] = []
    input_hashes: dict[str, tuple[int, str]] = {}
    for member, fmt in inputs:
        limits.check("max_raw_input_bytes", reader.size(member))
        data = reader.read(member)
        input_hashes[member] = (len(data), sha256_hex(data))
        try:
            documents.append(parser_for(fmt)(data, member))
        except RecursionError:
            raise IntakeError(f"{member} nests too deeply", code="intake.invalid_json") from None
        del data
        if progress:
            progress("parse", len(documents), len(inputs))
    hashes = hash_originals(reader, limits, input_hashes, progress)
    fingerprint = fingerprint_from_hashes(hashes)

    records = RecordSet(limits)
    for doc in documents:
        records.add_document(doc)
    referenced: set[str] = set()
    for doc in documents:
        for ref in doc.references:
            if ref.member is not None:
                referenced.add(ref.member)
    records.resolve_member_refs(hashes)
    inputs_set = {m for m, _ in inputs}
    for name in sorted(hashes):
        if name not in inputs_set and name not in referenced:
            records.add_unread_member(name, *hashes[name])
    records.finish()
    if progress:
        progress("records", len(records.records), len(records.records))

    document = {
        "case_format": CASE_FORMAT,
        "case_id": manifest.case_id,
        "package_id": manifest.package_id,
        "analysis_revision": analysis_revision,
        "raw_input_fingerprint": fingerprint,
        "inputs": [
            {"member": m, "format": f, "size": hashes[m][0], "sha256": hashes[m][1]}
            for m, f in inputs
        ],
        "completeness": {"expected_behavior": records.completeness},
        "record_counts": records.counts(),
        "builder_limits": limits.to_json(),
        "records": records.records,
    }
    try:
        data = canonical_json(document)
    except ValueError as exc:
        raise CaseBuildError(f"case is not serialisable: {exc}") from None
    limits.check("max_case_bytes", len(data))
    return CanonicalCase(document, data, sha256_hex(data), fingerprint)


def load_canonical_case(data: bytes) -> dict[str, Any]:
    """Parse stored canonical case bytes (checks the format marker)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseBuildError(f"canonical case is not JSON: {exc}", code="case.corrupt") from None
    if not isinstance(doc, dict) or doc.get("case_format") != CASE_FORMAT:
        raise CaseBuildError("not a canonical case v1", code="case.corrupt")
    return doc
