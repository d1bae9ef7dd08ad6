"""The error tree of viano_bug_analysis, drawn where it is defined.

Every error carries a stable diagnostic ``code`` (dotted, lower case). Callers and the
CLI's ``--json`` output classify by ``code`` or by type, never by message text::

    VianoError                      code: "viano.error"
    ├── PackageError                a ZIP package is unsafe, malformed or would be damaged
    │                               (codes "package.*", see docs/package-format.md)
    ├── StoreError                  the package store is missing, inconsistent or refuses
    │   │                           an operation (codes "store.*")
    │   └── LockBusy                another operation holds the (case, package) lock
    ├── IntakeError                 a raw input cannot be read as its declared format
    │                               (codes "intake.*", see docs/intake-format.md)
    ├── CaseBuildError              the canonical case cannot be built (codes "case.*")
    └── LimitExceeded               a configured size or count limit was passed
                                    (codes "limit.*"); carries limit, value and name

The interpretation phase adds its own subclass (``InterpretationError``) next to these.
``LimitExceeded`` is deliberately not a subclass of one phase: package reading, intake
parsing and case building all enforce limits.
"""

from __future__ import annotations

from typing import Any


class VianoError(Exception):
    """Base of every viano_bug_analysis error. ``code`` is the diagnostic code."""

    code: str = "viano.error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details: dict[str, Any] = details

    def to_json(self) -> dict[str, Any]:
        """The error as the CLI prints it under ``error``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = {k: v for k, v in self.details.items() if _jsonable(v)}
        return out

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


def _jsonable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool | type(None) | list | dict)


class PackageError(VianoError):
    """A ZIP package is unsafe, malformed, or an edit would break its immutability rules."""

    code = "package.invalid"


class StoreError(VianoError):
    """The package store refuses an operation or is missing."""

    code = "store.error"


class LockBusy(StoreError):
    """Another operation (thread, process) holds the lock for this (case, package)."""

    code = "store.lock_busy"


class IntakeError(VianoError):
    """A raw input is not valid in its declared intake format."""

    code = "intake.invalid"


class CaseBuildError(VianoError):
    """The canonical case cannot be built from the package's raw inputs."""

    code = "case.build_failed"


class LimitExceeded(VianoError):
    """A configured limit was passed. ``name`` says which, ``limit`` and ``value`` how far."""

    code = "limit.exceeded"

    def __init__(self, message: str, *, name: str, limit: int, value: int, **details: Any):
        super().__init__(
            message, code=f"limit.{name}", name=name, limit=limit, value=value, **details
        )
        self.name = name
        self.limit = limit
        self.value = value
