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
    name_key,
    publish_and_commit,
    publish_report,
)

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
