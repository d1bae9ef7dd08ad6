"""Trace's stored records (SQLAlchemy 2, typed).

Incident -has-> Organization reports (Report) about a Person; each report creates one
Claim on that person; a "missing" claim opens an Alert. A person may have alternate names
(PersonAlternateName); two people are never merged: a person's decision that they are the
same person, or different people, is kept as a PersonLink (the newest for a pair counts).
InvestigationRun belongs to an incident (the spec's ``Incident -HasInvestigation->
InvestigationRun``) and names the report it looked at; the investigation package writes
it, nothing here does. A ReviewDecision is a person's decision about a NEEDS_REVIEW run
(appended, never edited).

Ids are opaque strings (:func:`trace_app.store.types.new_id`). Everything that deletes an
incident's records goes through :func:`trace_app.demo.seed.reset_demo`.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from trace_app.store.types import ID_LENGTH, UTCDateTime, utc_now

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class ClaimStatus(enum.StrEnum):
    """What a report says about a person."""

    MISSING = "missing"
    SEEN = "seen"
    ADMITTED = "admitted"
    SAFE = "safe"
    DECEASED = "deceased"


class AlertState(enum.StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class AlertCloseReason(enum.StrEnum):
    """What a person closing an alert by hand knows (trace_app.domain.alert_actions)."""

    FOUND_SAFE = "found_safe"
    ADMITTED = "admitted"
    DECEASED = "deceased"
    DUPLICATE = "duplicate"
    WITHDRAWN = "withdrawn"


def _id() -> Mapped[str]:
    return mapped_column(String(ID_LENGTH), primary_key=True)


class Incident(Base):
    __tablename__ = "incidents"

    id: Mapped[str] = _id()
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    # an IANA zone name: pages show the incident's times in it (trace_app.domain.time_zones)
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")
    # enquirers' contacts are erased this many days after their inquiry closes
    # (trace_app.notifications.retention)
    contact_retention_days: Mapped[int] = mapped_column(Integer, default=90, server_default="90")

    reports: Mapped[list[Report]] = relationship(back_populates="incident")
    investigation_runs: Mapped[list[InvestigationRun]] = relationship(back_populates="incident")


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = _id()
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(40), default="other")

    reports: Mapped[list[Report]] = relationship(back_populates="organization")


class Person(Base):
    """Several people of an incident may share a name: who a report is about is decided by
    :func:`trace_app.domain.identity.match_or_create_person`."""

    __tablename__ = "people"
    # the listing's total order (name, then id), its pages after a cursor a range of it;
    # it also serves lookups by name (migration 0015)
    __table_args__ = (Index("ix_people_incident_name_key_id", "incident_id", "name_key", "id"),)

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))
    # the name and alternate names as search matches them, one per line
    # (trace_app.domain.search.search_key, trace_app.domain.identity.person_search_key)
    search_key: Mapped[str] = mapped_column(Text, default="", server_default="")
    age: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # the linked group this record belongs to: the smallest person id of the records
    # decided "same" (transitively); null for a record in no group. Recomputed from the
    # current decisions (trace_app.domain.links.regroup), never typed in.
    group_id: Mapped[str | None] = mapped_column(String(ID_LENGTH), nullable=True, index=True)

    claims: Mapped[list[Claim]] = relationship(back_populates="person", order_by="Claim.position")
    alternate_names: Mapped[list[PersonAlternateName]] = relationship(
        back_populates="person",
        order_by="PersonAlternateName.position",
        cascade="all, delete-orphan",
    )


class PersonAlternateName(Base):
    """Another name a person is known by (a spelling, a nickname, another script)."""

    __tablename__ = "person_alternate_names"
    __table_args__ = (
        UniqueConstraint("person_id", "name_key", name="uq_person_alternate_names_key"),
        Index("ix_person_alternate_names_incident_key", "incident_id", "name_key"),
    )

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer, default=0)

    person: Mapped[Person] = relationship(back_populates="alternate_names")


class LinkDecision(enum.StrEnum):
    """A person's decision about two people: the same person, different people, or a
    withdrawn decision (the pair is undecided again)."""

    SAME = "same"
    DIFFERENT = "different"
    UNDECIDED = "undecided"


class PersonLink(Base):
    """One decision about a pair of people, kept forever: a later decision about the same
    pair supersedes it (highest ``sequence``), so the history stays. The pair is stored in
    id order (``person_a_id`` < ``person_b_id``) whichever page it was decided on."""

    __tablename__ = "person_links"
    __table_args__ = (
        UniqueConstraint("person_a_id", "person_b_id", "sequence", name="uq_person_links_sequence"),
    )

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    person_a_id: Mapped[str] = mapped_column(
        ForeignKey("people.id", ondelete="CASCADE"), index=True
    )
    person_b_id: Mapped[str] = mapped_column(
        ForeignKey("people.id", ondelete="CASCADE"), index=True
    )
    # the person whose page (or API path) the decision was made from
    decided_on_person_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    decision: Mapped[str] = mapped_column(String(20))
    note: Mapped[str] = mapped_column(Text, default="")
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    sequence: Mapped[int] = mapped_column(Integer, default=1)
    # who decided (an account's name); empty for decisions made before accounts existed
    decided_by: Mapped[str] = mapped_column(String(200), default="", server_default="")


class Report(Base):
    """One report from one source (an organisation): the spec's single-source report."""

    __tablename__ = "reports"
    __table_args__ = (Index("ix_reports_incident_reported", "incident_id", "reported_at"),)

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    organization_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    summary: Mapped[str] = mapped_column(Text)
    original_text: Mapped[str] = mapped_column(Text)
    reported_at: Mapped[datetime] = mapped_column(UTCDateTime())
    references: Mapped[list[str]] = mapped_column(JSON, default=list)
    person_name: Mapped[str] = mapped_column(String(200))
    person_age: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20))
    location: Mapped[str] = mapped_column(String(300), default="")
    published_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    position: Mapped[int] = mapped_column(Integer, default=0)

    incident: Mapped[Incident] = relationship(back_populates="reports")
    organization: Mapped[Organization] = relationship(back_populates="reports")
    person: Mapped[Person] = relationship()
    claims: Mapped[list[Claim]] = relationship(back_populates="report")

    @property
    def source(self) -> str:
        """The name of the organisation the report comes from."""
        return self.organization.name


class Claim(Base):
    """What one report says about one person (status and location)."""

    __tablename__ = "claims"

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    report_id: Mapped[str] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(20))
    location: Mapped[str] = mapped_column(String(300), default="")
    position: Mapped[int] = mapped_column(Integer, default=0)

    person: Mapped[Person] = relationship(back_populates="claims")
    report: Mapped[Report] = relationship(back_populates="claims")


class Alert(Base):
    """Raised for the incident when a claim says a person is missing: one row per
    missing claim.

    The rule in :mod:`trace_app.domain.alerts` keeps one open alert per person (a linked
    group): a missing claim while the group's alert is open *joins* it as another source
    (``joined_alert_id`` names the alert it joined; its state mirrors that alert's). An
    alert closes by a later safe, admitted or deceased claim (``closed_by_claim_id``) or
    by a person as a duplicate or withdrawn (``close_reason``, ``close_note``).
    """

    __tablename__ = "alerts"
    # Serves "newest open alerts of an incident" straight from the index (no sort).
    __table_args__ = (Index("ix_alerts_open_newest", "incident_id", "state", "position", "id"),)

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    claim_id: Mapped[str] = mapped_column(ForeignKey("claims.id", ondelete="CASCADE"), index=True)
    state: Mapped[str] = mapped_column(String(10), default=AlertState.OPEN.value)
    raised_at: Mapped[datetime] = mapped_column(UTCDateTime())
    position: Mapped[int] = mapped_column(Integer, default=0)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    closed_by_claim_id: Mapped[str | None] = mapped_column(
        ForeignKey("claims.id", ondelete="CASCADE"), nullable=True, index=True
    )
    close_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    # who closed it by hand (an account's name); null when closed by rule or still open
    closed_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # set: closed by hand as a duplicate or withdrawn (the rule leaves such rows alone)
    close_reason: Mapped[str | None] = mapped_column(String(20), nullable=True)
    # the group's open alert this missing claim joined as another source; null: its own
    joined_alert_id: Mapped[str | None] = mapped_column(
        ForeignKey("alerts.id", ondelete="SET NULL"), nullable=True, index=True
    )
    # a person reopened it after a mistaken close: who and why
    reopened_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    reopen_note: Mapped[str | None] = mapped_column(Text, nullable=True)

    person: Mapped[Person] = relationship()
    claim: Mapped[Claim] = relationship(foreign_keys=[claim_id])


class InvestigationRun(Base):
    """A saved investigation result (COMPLETED or NEEDS_REVIEW), written by the investigation.

    ``fingerprint`` is the content fingerprint (no ids) and is unique per incident, so a
    repeat of the same evidence finds the saved run (CACHED).

    The columns up to ``rules_version`` are what was saved and never change. The
    ``decided_*`` columns hold the run's status under the rules named by
    ``decided_version`` (``trace_app.investigation.evidence_store``: written at save time,
    re-decided when the rules change), and ``awaiting_review`` says the run is in its
    incident's review queue (docs/decisions/0084-stored-decisions-and-an-indexed-review-queue.md).
    """

    __tablename__ = "investigation_runs"
    __table_args__ = (
        UniqueConstraint("incident_id", "fingerprint", name="uq_investigation_runs_fingerprint"),
        Index(
            "ix_investigation_runs_review_queue", "incident_id", "awaiting_review", "run_at", "id"
        ),
        Index("ix_investigation_runs_decided_version", "incident_id", "decided_version"),
        Index("ix_investigation_runs_report_newest", "report_id", "run_at", "id"),
        # the queue in priority order after its open-alert lane (migration 0018)
        Index(
            "ix_investigation_runs_review_priority",
            "incident_id",
            "awaiting_review",
            "review_rank",
            "report_reported_at",
            "id",
        ),
    )

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    report_id: Mapped[str] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(20))
    mode: Mapped[str] = mapped_column(String(20))
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(80))
    run_at: Mapped[datetime] = mapped_column(UTCDateTime())
    fingerprint: Mapped[str] = mapped_column(String(128), index=True)
    attribution: Mapped[str | None] = mapped_column(String(20), nullable=True)
    referenced_source: Mapped[str | None] = mapped_column(String(200), nullable=True)
    support: Mapped[str | None] = mapped_column(String(20), nullable=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    estimated_tokens: Mapped[int] = mapped_column(Integer, default=0)
    usage_source: Mapped[str] = mapped_column(String(20), default="estimate")
    citations: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    reason: Mapped[str] = mapped_column(Text, default="")
    # the attribution cues found when it ran, and the rules version that set ``status``
    evidence: Mapped[list[dict[str, Any]]] = mapped_column(
        JSON, default=list, server_default=text("'[]'")
    )
    rules_version: Mapped[str | None] = mapped_column(String(80), nullable=True)
    # the current decision (kept by code; NULL before it was first decided)
    decided_status: Mapped[str | None] = mapped_column(String(20), nullable=True)
    decided_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_lowered_by: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    # the cues it read when a rules change re-decided it; NULL: the saved ``evidence``
    decided_evidence: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    decided_version: Mapped[str | None] = mapped_column(String(120), nullable=True)
    # decided NEEDS_REVIEW, its report's latest run, and no person has decided on it
    awaiting_review: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=text("false")
    )
    # the review queue's order after the open-alert lane, copied from the report when the
    # run is saved (trace_app.domain.reviews.queue_keys; both never change afterwards):
    # 0 about a child or an older person, 1 anyone else; and the report's reported time.
    # NULL until set: the queue's next read sets them (investigation.review_queue)
    review_rank: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    report_reported_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    incident: Mapped[Incident] = relationship(back_populates="investigation_runs")
    report: Mapped[Report] = relationship()


class ReviewDecision(Base):
    """A person's decision about a report's NEEDS_REVIEW investigation result.

    Appended, never edited: ``sequence`` counts a report's decisions from 1 and the
    highest is the current one (``trace_app.domain.reviews``). ``run_id`` names the saved
    run the person looked at; the run itself is never changed by a decision.
    """

    __tablename__ = "review_decisions"
    __table_args__ = (
        UniqueConstraint("report_id", "sequence", name="uq_review_decisions_report_sequence"),
        # the incident's newest decisions (the Reviews page's "Recently decided"): a range
        # read backwards, not every decision of the incident sorted
        Index("ix_review_decisions_incident_newest", "incident_id", "decided_at", "id"),
    )

    id: Mapped[str] = _id()
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    report_id: Mapped[str] = mapped_column(ForeignKey("reports.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(
        ForeignKey("investigation_runs.id", ondelete="CASCADE"), index=True
    )
    sequence: Mapped[int] = mapped_column(Integer)
    decision: Mapped[str] = mapped_column(String(40))
    note: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # who decided (an account's name); empty for decisions made before accounts existed
    decided_by: Mapped[str] = mapped_column(String(200), default="", server_default="")


class ReviewAssignment(Base):
    """Who has taken a report's review ("assign to me"): one row per report, replaced when
    someone else takes it and deleted when it is released (each change audited,
    ``trace_app.domain.reviews.assign``)."""

    __tablename__ = "review_assignments"
    # "assigned to me" on the queue: the incident's reports one account holds
    __table_args__ = (
        Index("ix_review_assignments_incident_assignee", "incident_id", "assigned_to"),
    )

    report_id: Mapped[str] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    incident_id: Mapped[str] = mapped_column(ForeignKey("incidents.id", ondelete="CASCADE"))
    assigned_to: Mapped[str] = mapped_column(String(200))
    assigned_at: Mapped[datetime] = mapped_column(UTCDateTime())
