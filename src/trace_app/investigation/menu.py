"""Step 2: the menu of other sources that a report names verbatim."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from trace_app.investigation.evidence import ReportEvidence

MIN_NAME_CHARACTERS = 4
MAX_MENU_SOURCES = 8


@dataclass(frozen=True, slots=True)
class Menu:
    """Source names the model may pick from (plus NONE), sorted for a stable request."""

    names: tuple[str, ...]

    @property
    def too_many(self) -> bool:
        return len(self.names) > MAX_MENU_SOURCES


def build_menu(chosen: ReportEvidence, incident_sources: Iterable[str]) -> Menu:
    """Other organisations' source names (from the incident's reports) found verbatim.

    A name counts only when it has at least four characters, is not the chosen report's
    own source, and occurs in the report text exactly as written (case included).
    """
    candidates = {
        name
        for name in incident_sources
        if name != chosen.source and len(name.strip()) >= MIN_NAME_CHARACTERS
    }
    return Menu(names=tuple(sorted(name for name in candidates if name in chosen.text)))


def reports_from(source: str, incident_reports: Iterable[ReportEvidence]) -> list[ReportEvidence]:
    """Every report of the incident that came from ``source``."""
    return [report for report in incident_reports if report.source == source]
