"""What an import answers: its summary (added, skipped and why, flagged), and a refused file's."""

from __future__ import annotations

from pydantic import BaseModel

from trace_app.domain.pfif_import import ImportSummary


class SkippedOut(BaseModel):
    kind: str
    record_id: str
    reason: str


class InvalidOut(BaseModel):
    kind: str
    record_id: str
    index: int
    reasons: list[str]


class FlaggedOut(BaseModel):
    record_id: str
    person_id: str
    name: str
    reason: str


class ImportSummaryOut(BaseModel):
    """What an import added, skipped (and why) and flagged for a person to look at.
    Lists hold at most 1,000 entries; the counts count all."""

    incident_id: str
    saved: bool
    people_added: int
    people_matched: int
    notes_added: int
    skipped_count: int
    invalid_count: int
    skipped: list[SkippedOut]
    invalid: list[InvalidOut]
    flagged: list[FlaggedOut]

    @classmethod
    def of(cls, summary: ImportSummary, *, saved: bool) -> ImportSummaryOut:
        return cls(
            incident_id=summary.incident_id,
            saved=saved,
            people_added=summary.people_added,
            people_matched=summary.people_matched,
            notes_added=summary.notes_added,
            skipped_count=summary.skipped_count,
            invalid_count=summary.invalid_count,
            skipped=[
                SkippedOut(kind=s.kind, record_id=s.record_id, reason=s.reason)
                for s in summary.skipped
            ],
            invalid=[
                InvalidOut(
                    kind=r.kind, record_id=r.record_id, index=r.index, reasons=list(r.reasons)
                )
                for r in summary.invalid
            ],
            flagged=[
                FlaggedOut(
                    record_id=f.record_id, person_id=f.person_id, name=f.name, reason=f.reason
                )
                for f in summary.flagged
            ],
        )


class ImportRefusedOut(BaseModel):
    detail: str
    code: str
    summary: ImportSummaryOut
