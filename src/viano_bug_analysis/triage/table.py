"""The triage table: ``triage.md``, ``triage.csv`` and ``triage.html`` (one static page,
no script), and each accepted interpretation's Markdown under ``interpretations/``.

Every file is written atomically (temp file, fsync, rename). Text from reports and
model answers is data: escaped for Markdown tables (``|``, line breaks, markup), for
HTML (``html.escape``), and as CSV cells, with a leading ``=``, ``+``, ``-`` or ``@``
quoted so that a spreadsheet never runs it as a formula.
"""

from __future__ import annotations

import csv
import html
import io
import re
from typing import Any

from modelgate.atomicfile import atomic_write
from viano_bug_analysis.errors import VianoError
from viano_bug_analysis.triage.runner import FAILED, TriageReport, TriageRow

COLUMNS = (
    "case",
    "source",
    "status",
    "gap",
    "stated expectation",
    "unknowns",
    "investigation direction",
    "interpretation",
    "error",
)


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def _name(row: TriageRow) -> str:
    return f"{row.case_id}/{row.package_id}" if row.case_id else ""


def _source(row: TriageRow) -> str:
    return row.source + (f":{row.line}" if row.line is not None else "")


def _cells(row: TriageRow) -> list[str]:
    return [
        _name(row),
        _source(row),
        row.status,
        _yes_no(row.behavior_gap),
        _yes_no(row.stated_expectation),
        " / ".join(row.unknowns),
        " / ".join(row.investigation_direction),
        row.interpretation or "",
        row.error_code or "",
    ]


def export_interpretations(report: TriageReport, store: Any) -> None:
    """Copy each accepted interpretation's Markdown next to the table, and link it."""
    from viano_bug_analysis.packages import POINTER_CASE_INTERPRETATION_SUMMARY

    folder = report.out / "interpretations"
    for row in report.rows:
        if row.status != "COMPLETED" or row.case_id is None or row.package_id is None:
            continue
        try:
            gen = store.current(row.case_id, row.package_id)
            member = gen.manifest.pointers.get(POINTER_CASE_INTERPRETATION_SUMMARY)
            if member is None:
                continue
            with gen.open() as reader:
                data = reader.read(member)
        except VianoError as exc:  # the row keeps its status; the link is left out
            row.message = f"interpretation not exported: [{exc.code}] {exc.message}"
            continue
        name = f"{row.case_id}--{row.package_id}.md"
        with atomic_write(folder / name) as f:
            f.write(data)
        row.interpretation = f"interpretations/{name}"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def markdown(report: TriageReport) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
    lines = [
        "# Triage",
        "",
        f"{len(report.rows)} rows: {counts}. Model calls this run: {report.model_calls}; "
        f"concurrency {report.concurrency}; {report.seconds:.1f} s.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + " --- |" * len(COLUMNS),
    ]
    for row in report.rows:
        cells = [_md(c) for c in _cells(row)]
        if row.interpretation:
            cells[7] = f"[{_md(row.case_id or '')}]({row.interpretation})"
        lines.append("| " + " | ".join(cells) + " |")
    failures = [r for r in report.rows if r.status == FAILED or r.error_code]
    if failures:
        lines += ["", "## Failures", ""]
        for row in failures:
            lines.append(
                f"- `{row.error_code}` {_md(_name(row) or _source(row))}: {_md(row.message or '')}"
            )
    return "\n".join(lines) + "\n"


def _csv_cell(text: str) -> str:
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def csv_text(report: TriageReport) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*COLUMNS, "message"])
    for row in report.rows:
        writer.writerow([_csv_cell(c) for c in [*_cells(row), row.message or ""]])
    return buffer.getvalue()


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
    "td,th{border:1px solid #bbb;padding:.3rem .5rem;vertical-align:top;text-align:left}"
    "th{background:#eee}.FAILED,.ERROR{background:#fdd}.COMPLETED{background:#efe}"
)


def html_page(report: TriageReport) -> str:
    e = html.escape
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
    head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
    body: list[str] = []
    for row in report.rows:
        cells = [e(c) for c in _cells(row)]
        if row.interpretation:
            cells[7] = f'<a href="{e(row.interpretation)}">{e(row.case_id or "")}</a>'
        if row.message:
            cells[8] = f'<span title="{e(row.message)}">{cells[8]}</span>'
        tds = "".join(f"<td>{c}</td>" for c in cells)
        body.append(f'<tr class="{e(row.status)}">{tds}</tr>')
    failures = "".join(
        f"<li><code>{e(r.error_code or '')}</code> {e(_name(r) or _source(r))}: "
        f"{e(r.message or '')}</li>"
        for r in report.rows
        if r.status == FAILED or r.error_code
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Triage</title><style>{_STYLE}</style></head><body>"
        f"<h1>Triage</h1><p>{len(report.rows)} rows: {e(counts)}. Model calls this run: "
        f"{report.model_calls}; concurrency {report.concurrency}; "
        f"{report.seconds:.1f} s.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        + (f"<h2>Failures</h2><ul>{failures}</ul>" if failures else "")
        + "</body></html>\n"
    )


def write_tables(report: TriageReport, store: Any | None) -> dict[str, str]:
    """Write the three tables (and, with ``store``, the interpretations) into
    ``report.out``; returns {kind: path}."""
    report.out.mkdir(parents=True, exist_ok=True)
    if store is not None:
        export_interpretations(report, store)
    files = {
        "markdown": (report.out / "triage.md", markdown(report)),
        "csv": (report.out / "triage.csv", csv_text(report)),
        "html": (report.out / "triage.html", html_page(report)),
    }
    for path, text in files.values():
        with atomic_write(path) as f:
            f.write(text.encode("utf-8"))
    report.files = {kind: str(path) for kind, (path, _) in files.items()}
    return report.files
