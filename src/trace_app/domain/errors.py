"""Errors raised by Trace's domain functions: one tree, each class with its ``code`` (for
machines, stable) and its ``http_status`` (what the web layer answers; the one exception
handler in :mod:`trace_app.web.failures` reads both, so no route catches these).

TraceError
 +-- NotSignedInError      no valid session or token (401)
 +-- RefusedError          signed in, but the role or token does not allow it here (403)
 +-- UnsupportedMediaError a body of a kind the operation does not take (415)
 +-- PublishError          a report cannot be published; nothing was saved
 |    +-- EmptyReportError     empty summary or original text (the form's exact message)
 |    +-- InvalidReportError   another field is unusable (person name, source, ...)
 +-- NotFoundError         an incident, report or alert id that does not exist
 +-- InvalidInputError     another request that cannot be carried out as given
 |    +-- BadCursorError       a list cursor (``after``) that is not one Trace wrote
 +-- ConfigurationError    a setting, a shipped file or a recording Trace cannot use
 +-- AlertClosedError      closing an alert that is already closed (409)
 +-- TooManyPeopleError    an incident-wide list too large to compute at its size (409)

Subclasses elsewhere keep to this tree: ``DateError`` (:mod:`trace_app.domain.dates`),
``AccountError``, ``PasswordRuleError``, ``ReviewRefusedError``, ``NoOrganizationError``,
``PfifError``, ``EvalCaseError`` (InvalidInputError, 422), ``ImportRefusedError`` (422),
``ImportChangedError`` (409), ``ReportNotFound`` (404); ``ModelSettingsError``,
``RecordedRunsError``, ``LexiconError``, ``GrammarError``, ``RecordingFailed``
(ConfigurationError); the web layer's own (upload, page number) live beside their
routes. ``trace_app.settings.SettingsError`` has a ``code`` too but stays a
``ValueError``: settings sit below the domain, which must not be imported to read them.
"""

from __future__ import annotations

EMPTY_REPORT_MESSAGE = "Enter a summary and the original report text."


class TraceError(Exception):
    """Base of Trace's domain errors; ``str(error)`` is a message fit for a user."""

    code = "error"
    http_status = 400


class NotSignedInError(TraceError):
    """No valid session or token: the API answers 401, a page sends the browser to sign in."""

    code = "not_signed_in"
    http_status = 401
    MESSAGE = "Sign in first: this server holds personal data of people in a disaster."

    def __init__(self, message: str = MESSAGE) -> None:
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self)


class RefusedError(TraceError):
    """Signed in, but the role (or the token's scopes) does not allow it here: 403.
    ``permission`` names what was needed, ``incident_id`` where (for the audit trail)."""

    code = "forbidden"
    http_status = 403

    def __init__(
        self, message: str, *, permission: str = "", incident_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.permission = permission
        self.incident_id = incident_id

    @property
    def message(self) -> str:
        return str(self)


class UnsupportedMediaError(TraceError):
    """A body of a media type the operation does not take (checked after sign-in)."""

    code = "http_415"
    http_status = 415


class PublishError(TraceError, ValueError):
    """``fields``: the input fields at fault (``"person.name"``), for forms to point at."""

    code = "invalid_report"
    http_status = 422

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
    http_status = 404


class InvalidInputError(TraceError, ValueError):
    code = "invalid_input"
    http_status = 422


class BadCursorError(InvalidInputError):
    """A keyset cursor that cannot be read: malformed, truncated or edited."""

    code = "bad_cursor"


class ConfigurationError(TraceError, ValueError):
    """A setting from the environment, a shipped or supplied file, or a recording that
    Trace cannot use; the message says which and why. Met at start-up and at the command
    line, where it is one sentence and exit status 1, never a traceback."""

    code = "configuration"
    http_status = 500


class AlertClosedError(TraceError):
    code = "alert_closed"
    http_status = 409


class TooManyPeopleError(TraceError):
    """An incident holds more people than an incident-wide computation is offered for
    (the Duplicates queue); ``people`` and ``limit`` say by how much."""

    code = "too_many_people"
    http_status = 409

    def __init__(self, message: str, *, people: int, limit: int) -> None:
        super().__init__(message)
        self.people = people
        self.limit = limit
