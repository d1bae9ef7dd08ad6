"""Package format v1: names, the manifest, checkpoints and safety limits.

A package is a ZIP file. The manifest (``manifest.json``) is the only source of the
package's identities and state; the ZIP's file name means nothing. See
docs/package-format.md for the full description.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from viano_bug_analysis.errors import PackageError
from viano_bug_analysis.packages.canonical import readable_json

FORMAT_NAME = "viano-package"
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
ORIGINAL_PREFIX = "original/"
ANALYSIS_PREFIX = "analysis/"
REVISIONS_PREFIX = "analysis/revisions/"
INTERPRETATIONS_PREFIX = "analysis/interpretations/"

# Phases written by this package; later phases (INTERPRETING_CASE, ...) are written by
# their own modules. The manifest accepts any upper-case phase name.
PHASE_SUPPLIED = "SUPPLIED"
PHASE_CASE_BUILT = "CASE_BUILT"
PHASE_INTERPRETING_CASE = "INTERPRETING_CASE"

# Manifest pointer names (values are member names inside the package).
POINTER_CANONICAL_CASE = "canonical_case"
POINTER_INTERPRETATION_CONTEXT = "interpretation_context"
POINTER_CASE_INTERPRETATION = "case_interpretation"
POINTER_CASE_INTERPRETATION_SUMMARY = "case_interpretation_summary"

CHECKPOINT_CASE_BUILT = "case-built"

IDENTITY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_PHASE_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_REVISION_DIR_RE = re.compile(r"^analysis/revisions/(\d{4,})/")

# Fixed timestamp for members this code writes: generation files are deterministic.
ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)

# The store's index keeps generations and revisions as SQLite INTEGERs (signed 64-bit).
# A manifest may hold at most MAX_COUNT in either, so that generation N+1 and revision
# R+1 still fit, and any integer anywhere in it must fit the index's range
# (docs/decisions/0100-a-store-no-package-can-break.md).
MAX_INDEX_INT = (1 << 63) - 1
MAX_COUNT = 1 << 53  # also the largest integer a JSON reader keeps exactly
MAX_MANIFEST_DEPTH = 64


def revision_dir(revision: int) -> str:
    """``analysis/revisions/NNNN/`` for an analysis revision (1-based)."""
    return f"{REVISIONS_PREFIX}{revision:04d}/"


def interpretation_dir(index: int) -> str:
    """``analysis/interpretations/NNNN/`` for an interpretation index (1-based)."""
    return f"{INTERPRETATIONS_PREFIX}{index:04d}/"


def frozen_namespace(name: str) -> str | None:
    """The frozen namespace (``analysis/revisions/NNNN/``) a member belongs to, if any."""
    match = _REVISION_DIR_RE.match(name)
    return match.group(0) if match else None


def check_identity(value: object, what: str) -> str:
    """A case_id or package_id: 1-128 characters of ``[A-Za-z0-9._-]``, not starting
    with ``.`` or ``-`` (they are also directory names in the store)."""
    if not isinstance(value, str) or not IDENTITY_RE.match(value):
        raise PackageError(
            f"{what} must be 1-128 characters of letters, digits, '.', '_' or '-' "
            f"starting with a letter or digit; got {value!r}",
            code="package.manifest_invalid",
            field=what,
        )
    return value


@dataclass(frozen=True)
class Checkpoint:
    """One entry of the manifest's ``checkpoints`` list.

    ``path`` names the immutable checkpoint file inside the package; the entry repeats its
    essentials so a reader can find the latest checkpoint without opening every file.
    ``data`` holds any further keys of the entry (kept on rewrite).
    """

    name: str
    analysis_revision: int
    package_generation: int
    path: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = dict(self.data)
        out.update(
            name=self.name,
            analysis_revision=self.analysis_revision,
            package_generation=self.package_generation,
            path=self.path,
        )
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Checkpoint:
        if not isinstance(obj, dict):
            raise PackageError(
                "a checkpoint entry must be an object", code="package.manifest_invalid"
            )
        try:
            name, rev, gen, path = (
                obj["name"],
                obj["analysis_revision"],
                obj["package_generation"],
                obj["path"],
            )
        except KeyError as exc:
            raise PackageError(
                f"checkpoint entry lacks {exc.args[0]!r}", code="package.manifest_invalid"
            ) from None
        if not (isinstance(name, str) and _is_count(rev) and _is_count(gen, 1)):
            raise PackageError("malformed checkpoint entry", code="package.manifest_invalid")
        if not isinstance(path, str):
            raise PackageError("checkpoint path must be a string", code="package.manifest_invalid")
        extra = {
            k: v
            for k, v in obj.items()
            if k not in ("name", "analysis_revision", "package_generation", "path")
        }
        return cls(name, rev, gen, path, extra)


def _is_count(value: object, minimum: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= MAX_COUNT


def check_json_values(obj: Any, what: str = "manifest.json") -> None:
    """Refuse, with ``package.manifest_invalid``, a value the store could not index or
    write back: an integer outside SQLite's signed 64-bit range, a float that is not
    finite, a string that is not UTF-8 (a lone surrogate), or nesting deeper than
    ``MAX_MANIFEST_DEPTH``. Checked before anything is written."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_MANIFEST_DEPTH:
            raise PackageError(f"{what} nests too deeply", code="package.manifest_invalid")
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            if not -MAX_INDEX_INT - 1 <= value <= MAX_INDEX_INT:
                raise PackageError(
                    f"{what} holds an integer outside the signed 64-bit range",
                    code="package.manifest_invalid",
                )
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise PackageError(
                    f"{what} holds a number that is not finite", code="package.manifest_invalid"
                )
        elif isinstance(value, str):
            _check_text(value, what)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(str(key), what)
                stack.append((item, depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)


def _check_text(value: str, what: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PackageError(
            f"{what} holds a string that is not valid Unicode", code="package.manifest_invalid"
        ) from None


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > 19:  # more digits than any signed 64-bit integer
        raise ValueError("integer outside the signed 64-bit range")
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass(frozen=True)
class Manifest:
    """The parsed ``manifest.json``. Immutable: use :meth:`evolve` to derive a new one.

    ``extra`` keeps manifest keys this version does not know; they are written back
    unchanged. ``inputs`` lists the raw inputs under ``original/`` with their intake
    format (``[{"member": "original/issue.json", "format": "github-issue"}]``).
    """

    package_id: str
    case_id: str
    package_generation: int = 1
    analysis_revision: int = 0
    phase: str = PHASE_SUPPLIED
    pointers: dict[str, str] = field(default_factory=dict)
    checkpoints: tuple[Checkpoint, ...] = ()
    inputs: tuple[dict[str, Any], ...] = ()
    source: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def evolve(self, **changes: Any) -> Manifest:
        """A copy with some fields replaced (unknown field names raise TypeError)."""
        if "checkpoints" in changes:
            changes["checkpoints"] = tuple(changes["checkpoints"])
        if "inputs" in changes:
            changes["inputs"] = tuple(changes["inputs"])
        return dataclasses.replace(self, **changes)

    def check_references(self, members: Container[str]) -> None:
        """Raise ``package.dangling_pointer`` unless every pointer and checkpoint names
        one of ``members`` (the one check of both, for the writer and the store)."""
        for pointer, member in self.pointers.items():
            if member not in members:
                raise PackageError(
                    f"pointer {pointer!r} names missing member {member!r}",
                    code="package.dangling_pointer",
                )
        for cp in self.checkpoints:
            if cp.path not in members:
                raise PackageError(
                    f"checkpoint {cp.name!r} names missing member {cp.path!r}",
                    code="package.dangling_pointer",
                )

    def latest_checkpoint(self, name: str | None = None) -> Checkpoint | None:
        """The last checkpoint entry (with this ``name``, if given), or None."""
        for cp in reversed(self.checkpoints):
            if name is None or cp.name == name:
                return cp
        return None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.extra)
        out.update(
            format=FORMAT_NAME,
            format_version=self.format_version,
            package_id=self.package_id,
            case_id=self.case_id,
            package_generation=self.package_generation,
            analysis_revision=self.analysis_revision,
            phase=self.phase,
            pointers=dict(sorted(self.pointers.items())),
            checkpoints=[cp.to_json() for cp in self.checkpoints],
            inputs=[dict(i) for i in self.inputs],
            source=dict(self.source),
        )
        return out

    def to_bytes(self) -> bytes:
        """Deterministic, human-readable JSON (sorted keys, 2-space indent, final newline)."""
        return readable_json(self.to_json())

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest:
        try:
            obj = json.loads(
                data.decode("utf-8"), parse_int=_parse_int, parse_constant=_no_constant
            )
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
            raise PackageError(
                f"manifest.json is not UTF-8 JSON the store can index: {exc}",
                code="package.manifest_invalid",
            ) from None
        return cls.from_json(obj)

    @classmethod
    def from_json(cls, obj: Any) -> Manifest:
        bad = "package.manifest_invalid"
        if not isinstance(obj, dict):
            raise PackageError("manifest.json must hold a JSON object", code=bad)
        check_json_values(obj)
        if obj.get("format", FORMAT_NAME) != FORMAT_NAME:
            raise PackageError(f"manifest format is not {FORMAT_NAME!r}", code=bad)
        version = obj.get("format_version")
        if version != FORMAT_VERSION:
            raise PackageError(
                f"unsupported format_version {version!r} (this reader knows {FORMAT_VERSION})",
                code="package.unsupported_version",
            )
        package_id = check_identity(obj.get("package_id"), "package_id")
        case_id = check_identity(obj.get("case_id"), "case_id")
        generation = obj.get("package_generation")
        revision = obj.get("analysis_revision", 0)
        if not _is_count(generation, 1):
            raise PackageError(
                f"package_generation must be an integer from 1 to {MAX_COUNT}", code=bad
            )
        if not _is_count(revision):
            raise PackageError(
                f"analysis_revision must be an integer from 0 to {MAX_COUNT}", code=bad
            )
        phase = obj.get("phase", PHASE_SUPPLIED)
        if not isinstance(phase, str) or not _PHASE_RE.match(phase):
            raise PackageError(f"invalid phase {phase!r}", code=bad)
        pointers = obj.get("pointers", {})
        if not isinstance(pointers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in pointers.items()
        ):
            raise PackageError("pointers must map names to member names", code=bad)
        checkpoints = obj.get("checkpoints", [])
        if not isinstance(checkpoints, list):
            raise PackageError("checkpoints must be a list", code=bad)
        inputs = obj.get("inputs", [])
        if not isinstance(inputs, list) or not all(
            isinstance(i, dict) and isinstance(i.get("member"), str) for i in inputs
        ):
            raise PackageError("inputs must be a list of objects with 'member'", code=bad)
        source = obj.get("source", {})
        if not isinstance(source, dict):
            raise PackageError("source must be an object", code=bad)
        known = {
            "format",
            "format_version",
            "package_id",
            "case_id",
            "package_generation",
            "analysis_revision",
            "phase",
            "pointers",
            "checkpoints",
            "inputs",
            "source",
        }
        return cls(
            package_id=package_id,
            case_id=case_id,
            package_generation=int(generation or 0),
            analysis_revision=revision,
            phase=phase,
            pointers=dict(pointers),
            checkpoints=tuple(Checkpoint.from_json(c) for c in checkpoints),
            inputs=tuple(dict(i) for i in inputs),
            source=dict(source),
            extra={k: v for k, v in obj.items() if k not in known},
        )


@dataclass(frozen=True)
class PackageLimits:
    """Safety limits checked when a ZIP package is opened and while members are read.

    Declared sizes are checked on open; actual sizes are counted while streaming, so a
    member that lies about its size is stopped at the limit.
    """

    max_members: int = 10_000
    max_member_bytes: int = 1 << 30  # 1 GiB uncompressed per member
    max_total_bytes: int = 4 << 30  # 4 GiB uncompressed in all
    max_compression_ratio: int = 500  # uncompressed / compressed, for members >= ratio_floor
    ratio_floor_bytes: int = 1 << 20  # small members may compress as well as they like
    # the whole package: declared bytes in all may pass total_floor_bytes only up to
    # max_package_ratio times the compressed bytes of its members
    max_package_ratio: int = 100
    total_floor_bytes: int = 64 << 20
    max_manifest_bytes: int = 4 << 20
    max_name_bytes: int = 1024
