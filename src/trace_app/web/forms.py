"""The Organizations form: its fields, parsing and the hospital example's values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from pydantic import ValidationError

from trace_app.demo.data import HOSPITAL_EXAMPLE, DemoReport
from trace_app.domain.publish import PersonInput, PublishReportInput
from trace_app.store.models import ClaimStatus

STATUSES = [status.value for status in ClaimStatus]


class FormError(ValueError):
    """The form's values cannot become a :class:`PublishReportInput`."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@dataclass
class ReportForm:
    """What the user typed, kept as text so that a refused form shows it again."""

    incident_id: str = ""
    source: str = ""
    summary: str = ""
    original_text: str = ""
    reported_at: str = ""
    references: str = ""
    person_name: str = ""
    person_age: str = ""
    status: str = ClaimStatus.MISSING.value
    location: str = ""
    errors: list[str] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> ReportForm:
        def text(name: str) -> str:
            value = data.get(name, "")
            return value if isinstance(value, str) else ""

        return cls(
            incident_id=text("incident_id"),
            source=text("source"),
            summary=text("summary"),
            original_text=text("original_text"),
            reported_at=text("reported_at"),
            references=text("references"),
            person_name=text("person_name"),
            person_age=text("person_age"),
            status=text("status") or ClaimStatus.MISSING.value,
            location=text("location"),
        )

    @classmethod
    def from_example(cls, incident_id: str, example: DemoReport = HOSPITAL_EXAMPLE) -> ReportForm:
        return cls(
            incident_id=incident_id,
            source=example.source,
            summary=example.summary,
            original_text=example.text,
            reported_at=example.reported_at.strftime("%Y-%m-%dT%H:%M"),
            references="\n".join(example.references),
            person_name=example.person,
            person_age="" if example.age is None else str(example.age),
            status=example.status,
            location=example.location,
        )

    def values(self) -> dict[str, object]:
        return asdict(self)

    def to_input(self) -> PublishReportInput:
        problems: list[str] = []
        age: int | None = None
        if self.person_age.strip():
            try:
                age = int(self.person_age.strip())
            except ValueError:
                problems.append("Age must be a whole number.")
        reported_at: datetime | None = None
        if self.reported_at.strip():
            try:
                reported_at = datetime.fromisoformat(self.reported_at.strip())
            except ValueError:
                problems.append("Reported time must look like 2026-07-15T07:30.")
            else:
                if reported_at.tzinfo is None:
                    reported_at = reported_at.replace(tzinfo=UTC)
        if self.status not in STATUSES:
            problems.append("Choose a status: " + ", ".join(STATUSES) + ".")
        if problems:
            raise FormError(problems)
        try:
            return PublishReportInput(
                incident_id=self.incident_id,
                source=self.source,
                summary=self.summary,
                original_text=self.original_text,
                reported_at=reported_at,
                references=[line for line in self.references.splitlines() if line.strip()],
                person=PersonInput(name=self.person_name, age=age),
                status=ClaimStatus(self.status),
                location=self.location,
            )
        except ValidationError as exc:
            raise FormError([_describe(err) for err in exc.errors()]) from exc


def _describe(error: Mapping[str, object]) -> str:
    loc = error.get("loc", ())
    where = ".".join(str(part) for part in loc) if isinstance(loc, tuple) else str(loc)
    labels = {"person.age": "Age", "references": "References"}
    return f"{labels.get(where, where)}: {error.get('msg', 'invalid value')}."
