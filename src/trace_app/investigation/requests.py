"""The two model requests of an investigation, built from the shipped prompt files.

Two prompt versions ship (:data:`PROMPT_VERSIONS`): ``report-lineage-v4`` and
``report-lineage-v5`` (short contrasting examples for small models). Both ask the same
typed questions; ``TRACE_PROMPT_VERSION`` picks one, :data:`PROMPT_VERSION` by default.

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
from trace_app.investigation.model_settings import (
    MAX_OUTPUT_TOKENS,
    PROMPT_VERSION,
    PROMPT_VERSIONS,
    TEMPERATURE,
)

__all__ = ["PROMPT_VERSION", "PROMPT_VERSIONS", "attribution_request", "support_request"]

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


def prompt_files(prompt_version: str) -> tuple[str, str]:
    """(attribution file, support file) of a shipped prompt version."""
    if prompt_version not in PROMPT_VERSIONS:
        raise ValueError(f"unknown prompt version {prompt_version!r}")
    return f"{prompt_version}-attribution.txt", f"{prompt_version}-support.txt"


def _request(
    prompt_version: str,
    which: int,
    output_name: str,
    schema_model: type,
    values: dict[str, str],
) -> ModelRequest:
    system, user = prompt_parts(prompt_files(prompt_version)[which])
    return ModelRequest(
        messages=(
            Message(role="system", content=system),
            Message(role="user", content=user.substitute(values)),
        ),
        output_name=output_name,
        output_schema=output_schema(schema_model),
        prompt_version=prompt_version,
        temperature=TEMPERATURE,
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )


def attribution_request(
    report: ReportEvidence,
    menu: Menu,
    output_type: type[AttributionResult],
    prompt_version: str = PROMPT_VERSION,
) -> ModelRequest:
    return _request(
        prompt_version,
        0,
        "AttributionResult",
        output_type,
        {
            "menu": json.dumps([*menu.names, NO_SOURCE], ensure_ascii=False),
            "source": as_data(report.source),
            "report_text": as_data(report.text),
        },
    )


def support_request(
    report: ReportEvidence, referenced: ReportEvidence, prompt_version: str = PROMPT_VERSION
) -> ModelRequest:
    return _request(
        prompt_version,
        1,
        "SupportResult",
        SupportResult,
        {
            "source": as_data(report.source),
            "report_text": as_data(report.text),
            "referenced_source": as_data(referenced.source),
            "referenced_text": as_data(referenced.text),
        },
    )
