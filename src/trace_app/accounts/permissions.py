"""Who may do what: the one table of roles and permissions (docs/decisions/0080).

Every route names one :class:`Permission` (``trace_app.web.auth.needs``); a test built
from the app's own route list fails for a route that names none. A role holds the
permissions of the role below it plus its own; an API token holds a subset of its user's
permissions (its scopes), never more: what a token may do is its scopes **and** its
user's role in the incident at hand.

| role | adds |
| --- | --- |
| viewer | read |
| reporter | reports:write (for the member's own organisation only) |
| reviewer | reviews:write, links:write, alerts:write, checks:run |
| coordinator | incidents:write, pfif:read, pfif:write, members:write, demo:reset |
| coordinator, too | contacts:read (enquirers' contacts, each read audited), webhooks:write |
| admin | users:write, audit:read |
"""

from __future__ import annotations

import enum


class Permission(enum.StrEnum):
    """A permission, and the API token scope of the same name."""

    READ = "read"
    REPORTS_WRITE = "reports:write"
    REVIEWS_WRITE = "reviews:write"
    LINKS_WRITE = "links:write"
    ALERTS_WRITE = "alerts:write"
    CHECKS_RUN = "checks:run"
    INCIDENTS_WRITE = "incidents:write"
    PFIF_READ = "pfif:read"
    PFIF_WRITE = "pfif:write"
    MEMBERS_WRITE = "members:write"
    DEMO_RESET = "demo:reset"
    # enquirers' contacts (tracing requests, issue 41): every read is audited
    CONTACTS_READ = "contacts:read"
    WEBHOOKS_WRITE = "webhooks:write"
    USERS_WRITE = "users:write"
    AUDIT_READ = "audit:read"


class Role(enum.StrEnum):
    VIEWER = "viewer"
    REPORTER = "reporter"
    REVIEWER = "reviewer"
    COORDINATOR = "coordinator"
    ADMIN = "admin"


_ADDS: dict[Role, frozenset[Permission]] = {
    Role.VIEWER: frozenset({Permission.READ}),
    Role.REPORTER: frozenset({Permission.REPORTS_WRITE}),
    Role.REVIEWER: frozenset(
        {
            Permission.REVIEWS_WRITE,
            Permission.LINKS_WRITE,
            Permission.ALERTS_WRITE,
            Permission.CHECKS_RUN,
        }
    ),
    Role.COORDINATOR: frozenset(
        {
            Permission.INCIDENTS_WRITE,
            Permission.PFIF_READ,
            Permission.PFIF_WRITE,
            Permission.MEMBERS_WRITE,
            Permission.DEMO_RESET,
            Permission.CONTACTS_READ,
            Permission.WEBHOOKS_WRITE,
        }
    ),
    Role.ADMIN: frozenset({Permission.USERS_WRITE, Permission.AUDIT_READ}),
}

ROLE_ORDER: tuple[Role, ...] = tuple(Role)


def _table() -> dict[Role, frozenset[Permission]]:
    table: dict[Role, frozenset[Permission]] = {}
    held: frozenset[Permission] = frozenset()
    for role in ROLE_ORDER:
        held = held | _ADDS[role]
        table[role] = held
    return table


ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = _table()
"""Every permission each role holds (its own and those of the roles below it)."""

# Permissions that are about the whole server, not one incident: only a membership for
# every incident grants them.
SERVER_WIDE: frozenset[Permission] = frozenset(
    {Permission.USERS_WRITE, Permission.AUDIT_READ, Permission.INCIDENTS_WRITE}
)


def allows(role: Role | str, permission: Permission) -> bool:
    return permission in ROLE_PERMISSIONS[Role(role)]


def may_grant(granter: Role | str, role: Role | str) -> bool:
    """A member who manages members gives roles up to their own, never above it (a
    coordinator cannot make an admin, or themselves one)."""
    return ROLE_ORDER.index(Role(role)) <= ROLE_ORDER.index(Role(granter))


def parse_scopes(values: list[str] | tuple[str, ...]) -> tuple[Permission, ...]:
    """Token scopes from their names (ValueError naming the unknown ones)."""
    unknown = [v for v in values if v not in Permission._value2member_map_]
    if unknown:
        known = ", ".join(p.value for p in Permission)
        raise ValueError(f"unknown scope {', '.join(unknown)}; the scopes are: {known}")
    return tuple(dict.fromkeys(Permission(v) for v in values))
