"""Trace's domain rules: publishing reports, listing, content fingerprints."""

from trace_app.domain.errors import (
    EMPTY_REPORT_MESSAGE,
    EmptyReportError,
    InvalidReportError,
    NotFoundError,
    PublishError,
    TraceError,
)
from trace_app.domain.publish import (
    PersonInput,
    PublishReportInput,
    publish_and_commit,
    publish_report,
)
from trace_app.domain.text import name_key

__all__ = [
    "EMPTY_REPORT_MESSAGE",
    "EmptyReportError",
    "InvalidReportError",
    "NotFoundError",
    "PersonInput",
    "PublishError",
    "PublishReportInput",
    "TraceError",
    "name_key",
    "publish_and_commit",
    "publish_report",
]
