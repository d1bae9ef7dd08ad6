"""The raw-input formats, one table: each format's name (the manifest's
``inputs[].format``), its ``viano import`` command, its parser and what it reads. The
parser lookup, the importers, the CLI and docs/intake-format.md (checked by a test) all
read this table; a new importer is one more row here and its parser."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from viano_bug_analysis.errors import IntakeError
from viano_bug_analysis.intake.model import IntakeDocument
from viano_bug_analysis.intake.native import parse_native
from viano_bug_analysis.intake.parsers import parse_bugzilla, parse_github_issue, parse_markdown

Parser = Callable[[bytes, str], IntakeDocument]


@dataclass(frozen=True)
class IntakeFormat:
    name: str
    command: str  # viano import COMMAND FILE -o OUT
    parse: Parser
    summary: str  # one line, for the command's help


FORMATS: dict[str, IntakeFormat] = {
    f.name: f
    for f in (
        IntakeFormat(
            "github-issue",
            "github-issue",
            parse_github_issue,
            "GitHub issue JSON (REST object with comments, or `gh issue view --json ...`).",
        ),
        IntakeFormat(
            "bugzilla",
            "bugzilla",
            parse_bugzilla,
            "Bugzilla REST bug JSON with comments (JSON Lines: one package per bug).",
        ),
        IntakeFormat(
            "markdown",
            "markdown",
            parse_markdown,
            "A Markdown bug report (steps, expected, actual headings).",
        ),
        IntakeFormat(
            "viano-intake",
            "intake",
            parse_native,
            "Native Viano intake JSON (docs/intake-format.md).",
        ),
    )
}


def parser_for(fmt: str) -> Parser:
    """The parser of format ``fmt``; IntakeError ``intake.unknown_format`` if none."""
    try:
        return FORMATS[fmt].parse
    except KeyError:
        raise IntakeError(f"unknown intake format {fmt!r}", code="intake.unknown_format") from None
