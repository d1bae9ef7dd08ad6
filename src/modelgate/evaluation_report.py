"""The figures and the report file that both ``eval`` commands share.

``trace eval`` (``trace_app.evaluation``) and ``viano eval``
(``viano_bug_analysis.evaluation``) count different things, but a share, a percentage, a
count by value, a confusion matrix and the JSON report file are worked out and written the
same way in both, here. Nothing here knows either app; it imports only
:mod:`modelgate.atomicfile`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from modelgate.atomicfile import write_bytes_atomic


def share(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to four places; ``None`` when there is nothing to divide by."""
    return round(part / whole, 4) if whole else None


def percent(value: float | None) -> str:
    """A share as ``"12.5%"``, or ``"n/a"`` for ``None``."""
    return "n/a" if value is None else f"{value * 100:.1f}%"


def counts(values: Iterable[object]) -> dict[str, int]:
    """How often each value occurs, keyed by its text, in key order."""
    found: dict[str, int] = {}
    for value in values:
        found[str(value)] = found.get(str(value), 0) + 1
    return dict(sorted(found.items()))


def confusion(
    rows: Sequence[str], columns: Sequence[str], pairs: Iterable[tuple[str, str]]
) -> dict[str, dict[str, int]]:
    """A confusion matrix: for each ``(row, column)`` pair one count, every cell present.

    ``KeyError`` for a pair outside the rows and columns (a label the caller did not expect
    is a bug to see, not a count to drop)."""
    matrix = {row: dict.fromkeys(columns, 0) for row in rows}
    for row, column in pairs:
        cells = matrix[row]
        if column not in cells:
            raise KeyError(column)
        cells[column] += 1
    return matrix


def confusion_lines(
    matrix: Mapping[str, Mapping[str, int]], columns: Sequence[str], corner: str, width: int
) -> list[str]:
    """The matrix as text: a header line (``corner`` above the row names), then one line
    per row, every cell ``width`` characters wide."""
    lines = [corner.ljust(width) + "".join(c.rjust(width) for c in columns)]
    for row, cells in matrix.items():
        lines.append(row.ljust(width) + "".join(str(cells[c]).rjust(width) for c in columns))
    return lines


def write_report(data: Mapping[str, Any], path: Path) -> None:
    """Write a report as indented UTF-8 JSON, atomically (temp file in the same folder,
    fsync, rename): a reader sees the previous file or the whole new one."""
    body = json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
    write_bytes_atomic(path, body)
