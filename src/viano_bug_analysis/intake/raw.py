"""What every parser of a raw input needs: the JSON object of its bytes, and a store-safe
identity made of free text."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from viano_bug_analysis.errors import IntakeError


def load_json_object(data: bytes, member: str) -> dict[str, Any]:
    """Parse UTF-8 JSON holding one object, or raise IntakeError ``intake.invalid_json``."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise IntakeError(
            f"{member} is not UTF-8: {exc}", code="intake.invalid_json", member=member
        ) from None
    except json.JSONDecodeError as exc:
        raise IntakeError(
            f"{member} is not valid JSON: {exc}", code="intake.invalid_json", member=member
        ) from None
    except RecursionError:
        raise IntakeError(
            f"{member} nests too deeply", code="intake.invalid_json", member=member
        ) from None
    if not isinstance(obj, dict):
        raise IntakeError(
            f"{member} must hold a JSON object", code="intake.invalid_json", member=member
        )
    return obj


def safe_identity(text: str) -> str:
    """A store-safe identity from free text: ``[A-Za-z0-9._-]``, at most 128 chars."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-_") or "case"
    return cleaned[:128]


READ_CHUNK = 1 << 20


def read_bounded(path: Path, limit: int, *, code: str = "intake.too_large") -> bytes:
    """The bytes of ``path``, counted while reading whatever kind of file it is (a
    regular file, a FIFO, a device such as ``/dev/zero``): IntakeError
    ``intake.too_large`` as soon as more than ``limit`` bytes came, so memory stays
    bounded by ``limit``. A regular file larger than ``limit`` is refused before reading."""
    with open(path, "rb", buffering=0) as f:
        info = os.fstat(f.fileno())
        if info.st_size > limit:
            raise IntakeError(f"{path} is larger than {limit} bytes", code=code)
        chunks: list[bytes] = []
        total = 0
        while chunk := f.read(min(READ_CHUNK, limit + 1 - total)):
            total += len(chunk)
            if total > limit:
                raise IntakeError(f"{path} yields more than {limit} bytes", code=code)
            chunks.append(chunk)
    return b"".join(chunks)
