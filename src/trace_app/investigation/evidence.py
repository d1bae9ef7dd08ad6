"""The evidence an investigation reads: the incident's single-source reports, as plain values.

Nothing here touches the database; the service turns stored reports into ``ReportEvidence``
so that the menu, the fingerprint and the decision rules stay pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_TEXT_CHARACTERS = 3000


@dataclass(frozen=True, slots=True)
class ReportEvidence:
    """One single-source report. ``report_id`` is for lookups only, never for fingerprints."""

    report_id: str
    source: str
    text: str
    reported_at: str
    references: tuple[str, ...]

    @property
    def text_problem(self) -> str | None:
        """Why this text cannot be sent to the model, or ``None`` when it can."""
        if not self.text.strip():
            return "The report has no original text to read."
        if len(self.text) > MAX_TEXT_CHARACTERS:
            return (
                f"The report text has {len(self.text):,} characters; "
                f"the limit is {MAX_TEXT_CHARACTERS:,}."
            )
        return None

    def content(self) -> dict[str, object]:
        """The content that identifies this report across resets (no database id)."""
        return {
            "source": self.source,
            "excerpt": self.text,
            "reported_at": self.reported_at,
            "references": list(self.references),
        }
