"""Where imported records came from: the PFIF record ids of people and reports.

An :class:`InterchangeRecord` names one record imported into an incident (a PFIF person
or note, or a shelter-list row) by its record id, unique per incident and kind, so that
importing the same file again adds nothing. ``fields`` keeps the record's fields that
Trace has no column for (a person's given and family names, description, age range,
source name and date), so an export writes a clone with the values it came with.
Rows go with their person or report (``ON DELETE CASCADE``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from trace_app.store.models import Base
from trace_app.store.types import ID_LENGTH, UTCDateTime, utc_now

MAX_RECORD_ID_CHARACTERS = 500


class InterchangeRecord(Base):
    __tablename__ = "interchange_records"
    __table_args__ = (
        UniqueConstraint(
            "incident_id", "kind", "record_id", name="uq_interchange_records_incident_record"
        ),
    )

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    incident_id: Mapped[str] = mapped_column(
        ForeignKey("incidents.id", ondelete="CASCADE"), index=True
    )
    # "person" or "note"
    kind: Mapped[str] = mapped_column(String(10))
    record_id: Mapped[str] = mapped_column(String(MAX_RECORD_ID_CHARACTERS))
    person_id: Mapped[str | None] = mapped_column(
        ForeignKey("people.id", ondelete="CASCADE"), nullable=True, index=True
    )
    report_id: Mapped[str | None] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), nullable=True, index=True
    )
    fields: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
