"""Errors raised by Trace's domain functions.

TraceError
 +-- PublishError          a report cannot be published; nothing was saved
 |    +-- EmptyReportError     empty summary or original text (the form's exact message)
 |    +-- InvalidReportError   another field is unusable (person name, source, ...)
 +-- NotFoundError         an incident, report or alert id that does not exist
 +-- InvalidInputError     another request that cannot be carried out as given
 |    +-- BadCursorError       a list cursor (``after``) that is not one Trace wrote
 +-- AlertClosedError      closing an alert that is already closed
 +-- TooManyPeopleError    an incident-wide list too large to compute at its size
"""

from __future__ import annotations

EMPTY_REPORT_MESSAGE = "Enter a summary and the original report text."


class TraceError(Exception):
    """Base of Trace's domain errors; ``str(error)`` is a message fit for a user."""


class PublishError(TraceError, ValueError):
    """``fields``: the input fields at fault (``"person.name"``), for forms to point at."""

    code = "invalid_report"

    def __init__(self, message: str, *, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.fields = fields


class EmptyReportError(PublishError):
    code = "empty_report"

    def __init__(self, *, fields: tuple[str, ...] = ("summary", "original_text")) -> None:
        super().__init__(EMPTY_REPORT_MESSAGE, fields=fields)


class InvalidReportError(PublishError):
    code = "invalid_report"


class NotFoundError(TraceError, LookupError):
    code = "not_found"


class InvalidInputError(TraceError, ValueError):
    code = "invalid_input"


class BadCursorError(InvalidInputError):
    """A keyset cursor that cannot be read: malformed, truncated or edited."""

    code = "bad_cursor"


class AlertClosedError(TraceError):
    code = "alert_closed"


class TooManyPeopleError(TraceError):
    """An incident holds more people than an incident-wide computation is offered for
    (the Duplicates queue); ``people`` and ``limit`` say by how much."""

    code = "too_many_people"

    def __init__(self, message: str, *, people: int, limit: int) -> None:
        super().__init__(message)
        self.people = people
        self.limit = limit
