"""The demo's accounts: one per role, with passwords made for this run only.

``trace demo`` and ``trace serve --demo`` call :func:`reset_demo_accounts` before serving
and print the names and passwords in the terminal (as the live-check passphrase is). Each
start gives every demo account a new password and ends its sessions; the login page of a
demo server lists the names, never the passwords. A deployment has no demo accounts and
no default account at all.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy.orm import Session

from trace_app.accounts import users
from trace_app.accounts.permissions import Role
from trace_app.demo.data import CAMP, HOSPITAL, POLICE
from trace_app.domain.audit import Actor

# name, role, organisation: the reporter publishes as the hospital (the form's example)
DEMO_ACCOUNTS: tuple[tuple[str, Role, str | None], ...] = (
    ("demo-viewer", Role.VIEWER, CAMP),
    ("demo-reporter", Role.REPORTER, HOSPITAL),
    ("demo-reviewer", Role.REVIEWER, CAMP),
    ("demo-coordinator", Role.COORDINATOR, POLICE),
    ("demo-admin", Role.ADMIN, None),
)
DEMO_ACCOUNT_NAMES: tuple[str, ...] = tuple(name for name, _role, _org in DEMO_ACCOUNTS)


@dataclass(frozen=True, slots=True)
class DemoAccount:
    name: str
    role: Role
    organization: str | None
    password: str


def reset_demo_accounts(session: Session, actor: Actor) -> list[DemoAccount]:
    """Create the demo accounts, or give them new passwords; the caller commits."""
    made: list[DemoAccount] = []
    for name, role, organization in DEMO_ACCOUNTS:
        password = secrets.token_urlsafe(12)  # 16 characters, 96 random bits
        membership = users.NewMembership(role=role.value, organization=organization)
        user = users.find_user(session, name)
        if user is None:
            users.create_user(session, actor, name, password, membership)
        else:
            users.set_password(session, actor, user, password)
            users.set_membership(session, actor, user, membership)
        made.append(DemoAccount(name, role, organization, password))
    return made
