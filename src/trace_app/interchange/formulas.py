"""Spreadsheet formulas in exported fields are neutralised (OWASP's CSV-injection advice).

A field written out in a PFIF or CSV file can end up in a spreadsheet, which runs a cell
that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) as
a formula. Such a value gets a leading apostrophe, which spreadsheets show as text and
people read past. Every exporter calls :func:`neutralize` on every field it writes; this
is the one place of the rule.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(value: str) -> str:
    """``value``, or ``'`` + ``value`` when a spreadsheet would run it as a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value
