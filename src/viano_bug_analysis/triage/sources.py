"""SOURCE arguments of ``viano triage`` to report files, each with its import format.

A SOURCE is a file, a folder (its report files, recursively, hidden ones left out) or a
glob (``reports/*.json``, ``**`` recursive). The format of each file is ``--format``
when given, else detected from the file: ``.md``/``.markdown``/``.txt`` is Markdown; a
JSON object (or the first line of JSON Lines) with ``intake_format`` is native intake,
with ``title`` and ``body`` or ``number`` a GitHub issue, with ``summary`` and
``comments``, ``product`` or ``creator`` a Bugzilla bug. Detection reads at most the
first 4 MiB of a file.
"""

from __future__ import annotations

import glob
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from viano_bug_analysis.errors import VianoError
from viano_bug_analysis.intake import IMPORT_FORMATS

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
JSON_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
DETECT_BYTES = 4 << 20
_GLOB = frozenset("*?[")


class TriageError(VianoError):
    """A triage source or option cannot be used (codes ``triage.*``)."""

    code = "triage.error"


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    format: str | None  # None: not detected (the row says why)
    problem: str | None = None


def expand_sources(sources: list[str], fmt: str | None = None) -> list[SourceFile]:
    """The report files named by ``sources``, in order, each once, with its format."""
    if fmt is not None and fmt not in IMPORT_FORMATS:
        raise TriageError(
            f"unknown format {fmt!r} (one of {', '.join(sorted(IMPORT_FORMATS))})",
            code="triage.unknown_format",
        )
    seen: set[Path] = set()
    files: list[SourceFile] = []
    for source in sources:
        for path in _paths(source, fmt):
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            files.append(_with_format(path, fmt))
    if not files:
        raise TriageError(
            f"no report file in {', '.join(sources) or 'no source'}", code="triage.no_input"
        )
    return files


def _paths(source: str, fmt: str | None) -> list[Path]:
    path = Path(source)
    if path.is_dir():
        return sorted(
            p
            for p in path.rglob("*")
            if _regular(p)
            and not any(part.startswith(".") for part in p.relative_to(path).parts)
            and (fmt is not None or p.suffix.lower() in MARKDOWN_SUFFIXES | JSON_SUFFIXES)
        )
    if path.exists() or not (_GLOB & set(source)):
        return [path]  # a file, or a missing path that the row reports
    return sorted(Path(p) for p in glob.glob(source, recursive=True) if _regular(Path(p)))


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _with_format(path: Path, fmt: str | None) -> SourceFile:
    if fmt is not None:
        return SourceFile(path, fmt)
    try:
        return SourceFile(path, detect_format(path))
    except TriageError as exc:
        return SourceFile(path, None, exc.message)


def detect_format(path: Path) -> str:
    """The import format of ``path`` (see the module docstring); TriageError
    ``triage.format_unknown`` when none fits."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return "markdown"
    if not _regular(path):
        raise TriageError(f"{path} is not a regular file", code="triage.format_unknown")
    with open(path, "rb") as f:
        head = f.read(DETECT_BYTES)
    obj = _first_object(head)
    if obj is None:
        raise TriageError(
            f"{path}: neither Markdown nor a JSON report (give --format)",
            code="triage.format_unknown",
        )
    if "intake_format" in obj:
        return "viano-intake"
    if "title" in obj and ("body" in obj or "number" in obj):
        return "github-issue"
    if "summary" in obj and ({"comments", "product", "creator"} & set(obj)):
        return "bugzilla"
    raise TriageError(
        f"{path}: a JSON object of no known report format (give --format)",
        code="triage.format_unknown",
    )


def _first_object(head: bytes) -> dict[str, object] | None:
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return None
    try:
        obj, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
