"""The Audit page's rows in words: what was done, to what (by name, with a link), in
which incident. The codes, ids and the before/after JSON stay in each row's folded
details (and in ``GET /api/audit``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.store.account_models import AuditEvent, User
from trace_app.store.models import Alert, Incident, Person, Report

ACTIONS = {
    "access.refused": "was refused",
    "account.language": "chose a language",
    "alert.close": "closed an alert",
    "alert.reopen": "reopened an alert",
    "csv.import": "imported a shelter list",
    "demo.reset": "reset the demo",
    "import.preview": "previewed an import",
    "incident.create": "opened an incident",
    "incident.time_zone": "set an incident's time zone",
    "investigation.check": "checked a report's source",
    "link.decide": "decided whether two records are one person",
    "login": "signed in",
    "logout": "signed out",
    "member.remove": "removed a member",
    "member.set": "gave a role",
    "people.export": "downloaded the people list",
    "pfif.export": "exported PFIF",
    "pfif.import": "imported PFIF",
    "report.publish": "published a report",
    "review.assign": "took a review",
    "review.decide": "decided a review",
    "token.create": "made an API token",
    "token.revoke": "revoked an API token",
    "user.create": "made an account",
    "user.disable": "switched an account off",
    "user.enable": "switched an account on",
    "user.password": "changed a password",
}
OUTCOMES = {"failed": "failed", "refused": "refused"}


@dataclass(frozen=True, slots=True)
class Target:
    text: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class AuditRow:
    event: Any  # an AuditEvent row (read only)
    what: str
    target: Target | None
    incident: Target | None


def _names(session: Session, model: Any, column: Any, ids: Iterable[str]) -> dict[str, str]:
    wanted = sorted({i for i in ids if i})
    if not wanted:
        return {}
    rows = session.execute(select(model.id, column).where(model.id.in_(wanted)))
    return {row[0]: str(row[1]) for row in rows}


def audit_rows(session: Session, events: list[AuditEvent]) -> list[AuditRow]:
    """Each event with its names looked up (one query a kind, for the page's rows only)."""

    def ids(kind: str) -> list[str]:
        return [e.object_id for e in events if e.object_type == kind]

    incidents = _names(
        session, Incident, Incident.name, [e.incident_id or "" for e in events] + ids("incident")
    )
    people = _names(session, Person, Person.name, ids("person"))
    reports = _names(session, Report, Report.summary, ids("report"))
    users = _names(session, User, User.name, ids("user"))
    alert_people = {
        row[0]: str(row[1])
        for row in session.execute(
            select(Alert.id, Person.name)
            .join(Person, Person.id == Alert.person_id)
            .where(Alert.id.in_(sorted(set(ids("alert")))))
        )
    }

    def target(event: AuditEvent) -> Target | None:
        kind, key = event.object_type, event.object_id
        if kind == "report" and key in reports:
            return Target(f"report “{reports[key]}”", f"/reports/{key}")
        if kind == "person" and key in people:
            return Target(people[key], f"/people/{key}")
        if kind == "alert" and key in alert_people:
            return Target(f"the alert about {alert_people[key]}", f"/alerts/{key}/close")
        if kind == "incident" and key in incidents:
            return Target(incidents[key], f"/incidents/{key}/people")
        if kind == "user" and key in users:
            return Target(users[key])
        if kind == "person_link":
            return Target("two records")
        return None

    rows = []
    for event in events:
        what = ACTIONS.get(event.action, event.action.replace(".", " ").replace("_", " "))
        if event.outcome in OUTCOMES and event.action != "access.refused":
            what = f"{what} ({OUTCOMES[event.outcome]})"
        place = event.incident_id
        incident = (
            Target(incidents[place], f"/incidents/{place}/people")
            if place and place in incidents
            else None
        )
        rows.append(AuditRow(event, what, target(event), incident))
    return rows
