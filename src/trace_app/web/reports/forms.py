"""The publish form ("Publish a report"): its fields, parsing and the hospital example's
values.

Each refusal is tied to its field in plain words (``field_errors``, shown beside the
field and listed above the form), never raw validator text. The form has no default
status: the reporter chooses what the report says. Its time is typed in the incident's
time zone and stored in UTC (:mod:`trace_app.domain.time_zones`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime

from pydantic import ValidationError

from trace_app.demo.data import HOSPITAL_EXAMPLE, DemoReport
from trace_app.domain.errors import EMPTY_REPORT_MESSAGE, InvalidInputError, TraceError
from trace_app.domain.publish import MAX_AGE, PublishReportInput
from trace_app.domain.time_zones import local_to_utc, utc_to_local_input
from trace_app.i18n import gettext
from trace_app.store.models import ClaimStatus
from trace_app.web.errors import plain

STATUSES = [status.value for status in ClaimStatus]

LABELS = {
    "incident_id": "Incident",
    "source": "Source",
    "summary": "Summary",
    "original_text": "Original report text",
    "reported_at": "Reported time",
    "references": "References",
    "person_name": "Person's name",
    "person_age": "Age",
    "person_alternate_names": "Other names",
    "person_id": "Person",
    "status": "Status",
    "location": "Location",
}
# Input fields (as the domain names them) -> form fields.
FORM_FIELDS = {
    "person.name": "person_name",
    "person.age": "person_age",
    "person.alternate_names": "person_alternate_names",
    "person.person_id": "person_id",
}
AGE_MESSAGE = f"Age must be a whole number from 0 to {MAX_AGE}."
STATUS_MESSAGE = "Choose what the report says about the person: " + ", ".join(STATUSES) + "."


class FormError(InvalidInputError):
    """The form's values cannot become a :class:`PublishReportInput` (one of the domain's
    refusals, 422). ``fields`` maps a form field to its message; ``messages`` lists them
    all once."""

    code = "invalid_form"

    def __init__(self, fields: dict[str, str], general: list[str] | None = None) -> None:
        self.fields = fields
        self.messages = list(dict.fromkeys([*(general or []), *fields.values()]))
        super().__init__("; ".join(self.messages))


def form_field(name: str) -> str:
    base = name.split(".", 1)[0] if name.startswith("references") else name
    return FORM_FIELDS.get(base, base)


def _sentence(label: str, text: str) -> str:
    text = text.rstrip(".")
    return f"{label} {text}."


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
    person_alternate_names: str = ""
    person_id: str = ""
    status: str = ""  # no default: the reporter chooses
    location: str = ""
    errors: list[str] = field(default_factory=list)
    field_errors: dict[str, str] = field(default_factory=dict)

    def refuse(self, error: FormError | TraceError) -> None:
        """Show a refusal: each message beside its field, and all of them above."""
        if isinstance(error, FormError):
            self.field_errors = dict(error.fields)
            self.errors = error.messages
            return
        message = str(error)
        names = getattr(error, "fields", ()) or (
            ("incident_id",) if getattr(error, "code", "") == "not_found" else ()
        )
        self.field_errors = {form_field(name): message for name in names}
        self.errors = [message]

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
            person_alternate_names=text("person_alternate_names"),
            person_id=text("person_id"),
            status=text("status"),
            location=text("location"),
        )

    @classmethod
    def from_example(
        cls, incident_id: str, time_zone: str, example: DemoReport = HOSPITAL_EXAMPLE
    ) -> ReportForm:
        """The hospital example, its time shown in the incident's zone ``time_zone``."""
        return cls(
            incident_id=incident_id,
            source=example.source,
            summary=example.summary,
            original_text=example.text,
            reported_at=utc_to_local_input(example.reported_at, time_zone),
            references="\n".join(example.references),
            person_name=example.person,
            person_age="" if example.age is None else str(example.age),
            status=example.status,
            location=example.location,
        )

    def values(self) -> dict[str, object]:
        return asdict(self)

    def to_input(self, time_zone: str) -> PublishReportInput:
        """The domain's input; the time is read in the incident's zone ``time_zone``
        (a typed offset wins) and given in UTC."""
        problems: dict[str, str] = {}
        age: int | None = None
        if self.person_age.strip():
            try:
                age = int(self.person_age.strip())
            except ValueError:
                problems["person_age"] = AGE_MESSAGE
            else:
                if not 0 <= age <= MAX_AGE:
                    problems["person_age"] = AGE_MESSAGE
        reported_at: datetime | None = None
        if self.reported_at.strip():
            try:
                reported_at = datetime.fromisoformat(self.reported_at.strip())
            except ValueError:
                problems["reported_at"] = gettext("Reported time must look like 2026-07-15T07:30.")
            else:
                try:
                    reported_at = local_to_utc(reported_at, time_zone)
                except OverflowError:
                    problems["reported_at"] = gettext(
                        "Reported time is outside the range of times Trace can store."
                    )
        if self.status not in STATUSES:
            problems["status"] = STATUS_MESSAGE
        if "status" in problems and len(problems) == 1:
            # no status yet: name the other faults too (validated with a stand-in status)
            try:
                self._validated(reported_at, age, ClaimStatus.MISSING)
            except FormError as other:
                raise FormError({**other.fields, **problems}) from other
            raise FormError(problems)
        if problems:
            raise FormError(problems)
        return self._validated(reported_at, age, ClaimStatus(self.status))

    def _validated(
        self, reported_at: datetime | None, age: int | None, status: ClaimStatus
    ) -> PublishReportInput:
        try:
            # one validation, so that every error carries its full place (person.name)
            return PublishReportInput.model_validate(
                {
                    "incident_id": self.incident_id,
                    "source": self.source,
                    "summary": self.summary,
                    "original_text": self.original_text,
                    "reported_at": reported_at,
                    "references": [line for line in self.references.splitlines() if line.strip()],
                    "person": {
                        "name": self.person_name,
                        "age": age,
                        "alternate_names": [
                            n for n in self.person_alternate_names.splitlines() if n.strip()
                        ],
                        "person_id": self.person_id.strip() or None,
                    },
                    "status": status,
                    "location": self.location,
                }
            )
        except ValidationError as exc:
            raise FormError(_field_messages(exc)) from exc


def _field_messages(exc: ValidationError) -> dict[str, str]:
    found: dict[str, str] = {}
    for error in exc.errors(include_url=False, include_input=False):
        loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
        name = form_field(".".join(loc))
        text = plain(error)
        if text == EMPTY_REPORT_MESSAGE:
            message = text
        elif name == "person_age":
            message = AGE_MESSAGE
        else:
            message = _sentence(LABELS.get(name, name.replace("_", " ").capitalize()), text)
        found.setdefault(name, message)
    return found
