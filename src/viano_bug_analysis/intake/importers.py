"""Importers: write a supplied package (generation 1) from a raw bug-report file.

``import_file(fmt, path, out)`` keeps the raw bytes under ``original/`` unchanged:

- a file holding ONE record (a JSON object, or a Markdown file) becomes one package whose
  ``original/<file name>`` is the whole file, byte for byte;
- a JSON Lines file (several JSON objects, one per line) becomes one package per record;
  each package's ``original/<stem>.line-<N>.json`` holds exactly that line's bytes
  WITHOUT its line terminator (``\\n`` or ``\\r\\n``), so it is a JSON document by itself.
  ``out`` is then a directory and each package is named ``<case_id>.zip``.

Every record is parsed before anything is written; an invalid record raises
IntakeError and no package is written. Packages are written atomically (temp file,
fsync, rename). Package files are deterministic for the same input and options.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from modelgate.atomicfile import atomic_write
from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake.formats import FORMATS, parser_for
from viano_bug_analysis.intake.raw import read_bounded
from viano_bug_analysis.packages.format import Manifest, check_identity
from viano_bug_analysis.packages.writer import PackageWriter

IMPORT_FORMATS = tuple(FORMATS)
DEFAULT_PACKAGE_ID = "supplied"
MAX_IMPORT_FILE_BYTES = 512 << 20


@dataclass(frozen=True)
class ImportedPackage:
    path: Path
    case_id: str
    package_id: str
    member: str
    line: int | None

    def to_json(self) -> dict[str, object]:
        return {
            "path": str(self.path),
            "case_id": self.case_id,
            "package_id": self.package_id,
            "package_generation": 1,
            "analysis_revision": 0,
            "member": self.member,
            "line": self.line,
        }


def _safe_member_stem(name: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-") or "input"
    return stem[:100]


def split_records(data: bytes, fmt: str) -> list[tuple[bytes, int | None]]:
    """(record bytes, 1-based line number or None) for a file's records."""
    if fmt == "markdown":
        return [(data, None)]
    try:
        json.loads(data.decode("utf-8"))
        return [(data, None)]
    except UnicodeDecodeError as exc:
        raise IntakeError(f"input is not UTF-8: {exc}", code="intake.invalid_json") from None
    except RecursionError:
        raise IntakeError("input nests too deeply", code="intake.invalid_json") from None
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise IntakeError(
                f"input is not valid JSON: {exc}", code="intake.invalid_json"
            ) from None
    records: list[tuple[bytes, int | None]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.strip():
            records.append((line, number))
    return records


def import_file(
    fmt: str,
    path: str | Path,
    out: str | Path,
    *,
    case_id: str | None = None,
    package_id: str = DEFAULT_PACKAGE_ID,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[ImportedPackage]:
    """Import ``path`` (format ``fmt``) into package file(s) at ``out``."""
    if fmt not in IMPORT_FORMATS:
        raise IntakeError(f"unknown import format {fmt!r}", code="intake.unknown_format")
    path = Path(path)
    out = Path(out)
    check_identity(package_id, "package_id")
    if case_id is not None:
        check_identity(case_id, "case_id")
    data = read_bounded(path, MAX_IMPORT_FILE_BYTES)
    records = split_records(data, fmt)
    if not records:
        raise IntakeError(f"{path} holds no record", code="intake.empty")
    many = len(records) > 1
    if many and case_id is not None:
        raise IntakeError(
            "--case-id cannot be used with a file of several records",
            code="intake.case_id_ambiguous",
        )
    file_sha = hashlib.sha256(data).hexdigest()
    stem = _safe_member_stem(path.name)
    planned: list[tuple[Manifest, str, bytes, int | None]] = []
    used: set[str] = set()
    for record, line in records:
        member = (
            f"original/{_safe_member_stem(path.stem)}.line-{line}.json"
            if many
            else f"original/{stem}"
        )
        doc = parser_for(fmt)(record, member)
        cid = case_id or doc.identity.get("case_id") or "case"
        if cid in used:
            cid = f"{cid[:110]}-line{line}"
        used.add(cid)
        check_identity(cid, "case_id")
        source: dict[str, object] = {
            "importer": fmt,
            "file_name": path.name,
            "file_sha256": file_sha,
        }
        if line is not None:
            source["line"] = line
        manifest = Manifest(
            package_id=package_id,
            case_id=cid,
            inputs=({"member": member, "format": fmt},),
            source=source,
        )
        planned.append((manifest, member, record, line))
        if progress:
            progress("parse", len(planned), len(records))
    if many:
        out.mkdir(parents=True, exist_ok=True)
    results: list[ImportedPackage] = []
    for manifest, member, record, line in planned:
        target = out / f"{manifest.case_id}.zip" if (many or out.is_dir()) else out
        writer = PackageWriter.new(manifest)
        writer.add_bytes(member, record)
        _write_atomic(writer, target)
        results.append(ImportedPackage(target, manifest.case_id, manifest.package_id, member, line))
        if progress:
            progress("write", len(results), len(planned))
    return results


def _write_atomic(writer: PackageWriter, target: Path) -> None:
    with atomic_write(target) as handle:
        writer.write(handle)
