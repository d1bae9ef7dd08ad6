"""Trace's storage: typed SQLAlchemy models, engine/session helpers and migrations."""

from trace_app.store.account_models import ApiToken, AuditEvent, Membership, User, WebSession
from trace_app.store.db import Database, make_engine, migrate
from trace_app.store.interchange_models import InterchangeRecord
from trace_app.store.models import (
    Alert,
    AlertState,
    Base,
    Claim,
    ClaimStatus,
    Incident,
    InvestigationRun,
    Organization,
    Person,
    Report,
)
from trace_app.store.notification_models import (
    Delivery,
    FollowUp,
    Inquiry,
    InquiryLink,
    OutboxEvent,
    WebhookEndpoint,
)
from trace_app.store.types import new_id, utc_now

__all__ = [
    "Alert",
    "AlertState",
    "ApiToken",
    "AuditEvent",
    "Base",
    "Claim",
    "ClaimStatus",
    "Database",
    "Delivery",
    "FollowUp",
    "Incident",
    "Inquiry",
    "InquiryLink",
    "InterchangeRecord",
    "InvestigationRun",
    "Membership",
    "Organization",
    "OutboxEvent",
    "Person",
    "Report",
    "User",
    "WebSession",
    "WebhookEndpoint",
    "make_engine",
    "migrate",
    "new_id",
    "utc_now",
]
