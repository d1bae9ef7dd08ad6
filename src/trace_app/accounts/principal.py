"""Who is asking, and what they may do where (function and object checks, ASVS 8.2)."""

from __future__ import annotations

from dataclasses import dataclass

from trace_app.accounts.permissions import SERVER_WIDE, Permission, Role, allows
from trace_app.domain.audit import Actor
from trace_app.store.account_models import EVERY_INCIDENT


@dataclass(frozen=True, slots=True)
class MembershipView:
    scope: str  # an incident id, or "*" for every incident
    role: Role
    organization_id: str | None
    organization_name: str | None


@dataclass(frozen=True, slots=True)
class Principal:
    """A signed-in user (``scopes`` None) or an API token (``scopes``: what it may do,
    within its user's role)."""

    actor: Actor
    user_id: str
    user_name: str
    memberships: tuple[MembershipView, ...]
    scopes: frozenset[Permission] | None = None
    token_id: str | None = None

    def membership_for(self, incident_id: str | None) -> MembershipView | None:
        """The membership that applies in ``incident_id``: one for that incident first,
        else the one for every incident. ``None``: the server-wide membership."""
        if incident_id is not None:
            for membership in self.memberships:
                if membership.scope == incident_id:
                    return membership
        for membership in self.memberships:
            if membership.scope == EVERY_INCIDENT:
                return membership
        return None

    def _scoped(self, permission: Permission) -> bool:
        return self.scopes is None or permission in self.scopes

    def can(self, permission: Permission, incident_id: str | None = None) -> bool:
        """May this principal do ``permission`` in ``incident_id`` (or server-wide)?"""
        if not self._scoped(permission):
            return False
        if permission in SERVER_WIDE:
            incident_id = None
        membership = self.membership_for(incident_id)
        return membership is not None and allows(membership.role, permission)

    def can_somewhere(self, permission: Permission) -> bool:
        """The function-level check: does any membership grant ``permission``?"""
        if not self._scoped(permission):
            return False
        if permission in SERVER_WIDE:
            return self.can(permission)
        return any(allows(m.role, permission) for m in self.memberships)

    def sees_every_incident(self) -> bool:
        return self.membership_for(None) is not None

    def incident_ids(self) -> frozenset[str]:
        """The incidents a member of only some incidents may see."""
        return frozenset(m.scope for m in self.memberships if m.scope != EVERY_INCIDENT)

    def may_see(self, incident_id: str) -> bool:
        return self.can(Permission.READ, incident_id)

    @property
    def home(self) -> MembershipView | None:
        """The membership a page's "signed in as" line shows."""
        return self.membership_for(None) or (self.memberships[0] if self.memberships else None)

    @property
    def description(self) -> str:
        """ "name (role, organisation)" for the "signed in as" line."""
        home = self.home
        if home is None:
            return f"{self.user_name} (no role)"
        parts = [home.role.value]
        if home.organization_name:
            parts.append(home.organization_name)
        if home.scope != EVERY_INCIDENT:
            parts.append("one incident" if len(self.memberships) == 1 else "some incidents")
        return f"{self.user_name} ({', '.join(parts)})"
