"""The output schema file shipped with the package: the one rule of an answer's shape
(read once; callers get a fresh copy)."""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_FILE = "case-interpretation-output-v1.schema.json"


def output_schema() -> dict[str, Any]:
    """The output schema file (a fresh copy on every call)."""
    return copy.deepcopy(shipped_schema())


@functools.cache
def shipped_schema() -> dict[str, Any]:
    """The schema, read and checked once (shared: do not change it)."""
    text = resources.files("viano_bug_analysis.analysis").joinpath("schemas").joinpath(SCHEMA_FILE)
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema
