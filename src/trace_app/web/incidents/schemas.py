"""What the incident routes take and answer (the API's shapes)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from trace_app.domain.incidents import MAX_DESCRIPTION_CHARACTERS as MAX_INCIDENT_DESCRIPTION
from trace_app.domain.incidents import MAX_NAME_CHARACTERS as MAX_INCIDENT_NAME
from trace_app.domain.time_zones import DEFAULT_TIME_ZONE, MAX_TIME_ZONE_CHARACTERS


class IncidentOut(BaseModel):
    id: str
    name: str
    description: str
    time_zone: str = Field(
        description="The IANA zone its pages show times in; the API's times stay UTC."
    )
    reports: int
    people: int
    open_alerts: int


class IncidentList(BaseModel):
    items: list[IncidentOut]


class IncidentIn(BaseModel):
    """A new incident: a name no other incident has (any case), and what it is."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_INCIDENT_NAME)
    description: str = Field(default="", max_length=MAX_INCIDENT_DESCRIPTION)
    time_zone: str = Field(
        default=DEFAULT_TIME_ZONE,
        max_length=MAX_TIME_ZONE_CHARACTERS,
        description="An IANA zone name such as Asia/Kathmandu; pages show times in it.",
    )


class ResetIn(BaseModel):
    """The reset takes an empty object."""

    model_config = ConfigDict(extra="forbid")


class ResetOut(BaseModel):
    incident_id: str
    reports: int
    people: int
    open_alerts: int


class TimeZoneIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time_zone: str = Field(
        max_length=MAX_TIME_ZONE_CHARACTERS,
        description="An IANA zone name such as Asia/Kathmandu, or UTC.",
    )


class TimeZoneOut(BaseModel):
    incident_id: str
    time_zone: str
