"""What the account, audit and member routes take and answer."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from trace_app.accounts import users
from trace_app.accounts.permissions import Role
from trace_app.domain.text import SourceNameText


class AuditEventOut(BaseModel):
    sequence: int
    at: datetime
    actor_kind: str
    actor_name: str
    action: str
    outcome: str
    incident_id: str | None
    object_type: str
    object_id: str
    touched: list[str]
    before: dict[str, object] | None
    after: dict[str, object] | None
    client: str
    note: str


class AuditPage(BaseModel):
    items: list[AuditEventOut]
    total: int
    offset: int
    limit: int


class MeOut(BaseModel):
    user: str
    via: str = Field(description="session or token")
    description: str
    memberships: list[dict[str, str | None]]
    scopes: list[str] | None


UserName = Annotated[str, Path(max_length=80, pattern=users.USER_NAME.pattern)]


class MemberIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    organization: SourceNameText | None = Field(
        default=None, description="The organisation they act for (a reporter needs one)."
    )


class RemoveIn(BaseModel):
    """Removing takes an empty object."""

    model_config = ConfigDict(extra="forbid")


class MemberOut(BaseModel):
    user: str
    role: Role
    organization: str | None
    scope: str = Field(description="This incident's id, or '*' for every incident.")


class MemberList(BaseModel):
    items: list[MemberOut]
