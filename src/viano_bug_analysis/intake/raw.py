"""What every parser of a raw input needs: the JSON object of its bytes, and a store-safe
identity made of free text."""

from __future__ import annotations

import json
import re
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
