"""The two model requests of an investigation, built from the v4 prompt files.

Each prompt file holds the instruction text (label definitions included: they must reach
the model as text, not as schema decoration), a ``=== user ===`` line, and the user
message template. Report texts are substituted as data with ``string.Template``; nothing
in a report can change the instructions.

In the user message each report sits between a ``<<<`` line and a ``>>>`` line. So that no
report can fake the end of its block, :func:`as_data` breaks every run of three or more
``<`` or ``>`` in substituted text (``>>>`` becomes ``> >>``). Text without such runs is
passed unchanged, byte for byte, so the requests (and the recorded runs) of every other
report are what they were (``docs/decisions/0035``).
"""

from __future__ import annotations

import functools
import json
import re
import string
from importlib import resources

from modelgate.answers import output_schema
from modelgate.types import Message, ModelRequest
from trace_app.investigation.answers import (
    NO_SOURCE,
    AttributionResult,
    SupportResult,
)
from trace_app.investigation.evidence import ReportEvidence
from trace_app.investigation.menu import Menu
from trace_app.investigation.model_settings import MAX_OUTPUT_TOKENS, TEMPERATURE

PROMPT_VERSION = "report-lineage-v4"
ATTRIBUTION_FILE = f"{PROMPT_VERSION}-attribution.txt"
SUPPORT_FILE = f"{PROMPT_VERSION}-support.txt"
USER_MARKER = "=== user ==="


_DELIMITER_RUN = re.compile(r"([<>])(?=\1\1)")


def as_data(text: str) -> str:
    """``text`` with no run of three ``<`` or ``>`` left (a space after all but the last
    two of a run), so it cannot open or close a data block; otherwise unchanged."""
    return _DELIMITER_RUN.sub(r"\1 ", text)


@functools.cache
def prompt_parts(filename: str) -> tuple[str, string.Template]:
    """(instruction text, user message template) of one shipped prompt file."""
    text = resources.files("trace_app").joinpath("prompts", filename).read_text("utf-8")
    system, marker, user = text.partition(f"\n{USER_MARKER}\n")
    if not marker:
        raise ValueError(f"prompt file {filename} has no '{USER_MARKER}' line")
    return system.strip(), string.Template(user.strip("\n"))


def _request(
    filename: str, output_name: str, schema_model: type, values: dict[str, str]
) -> ModelRequest:
    system, user = prompt_parts(filename)
    return ModelRequest(
        messages=(
            Message(role="system", content=system),
            Message(role="user", content=user.substitute(values)),
        ),
        output_name=output_name,
        output_schema=output_schema(schema_model),
        prompt_version=PROMPT_VERSION,
        temperature=TEMPERATURE,
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )


def attribution_request(
    report: ReportEvidence, menu: Menu, output_type: type[AttributionResult]
) -> ModelRequest:
    return _request(
        ATTRIBUTION_FILE,
        "AttributionResult",
        output_type,
        {
            "menu": json.dumps([*menu.names, NO_SOURCE], ensure_ascii=False),
            "source": as_data(report.source),
            "report_text": as_data(report.text),
        },
    )


def support_request(report: ReportEvidence, referenced: ReportEvidence) -> ModelRequest:
    return _request(
        SUPPORT_FILE,
        "SupportResult",
        SupportResult,
        {
            "source": as_data(report.source),
            "report_text": as_data(report.text),
            "referenced_source": as_data(referenced.source),
            "referenced_text": as_data(referenced.text),
        },
    )
