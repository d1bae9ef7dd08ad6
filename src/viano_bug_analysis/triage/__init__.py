"""``viano triage``: a backlog of bug reports imported, added, built and interpreted with
bounded concurrency, then one table of what was found (docs/viano-triage.md, ADR 0104).

- ``sources``: SOURCE arguments (files, folders, globs) to report files with a format;
- ``runner``: the pipeline, resumable because every step is a store generation;
- ``table``: triage.md, triage.csv and triage.html.
"""

from viano_bug_analysis.triage.runner import TriageReport, TriageRow, run_triage
from viano_bug_analysis.triage.sources import SourceFile, detect_format, expand_sources

__all__ = [
    "SourceFile",
    "TriageReport",
    "TriageRow",
    "detect_format",
    "expand_sources",
    "run_triage",
]
