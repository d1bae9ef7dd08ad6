"""``trace user``, ``trace token`` and ``trace audit``: accounts and the trail, at the server.

Whoever runs these commands on the server can read the database anyway; they act as the
operator (their login name goes into the audit row). A password is read from standard
input (``--password-stdin``) or asked for without echo, never taken as an argument (it
would sit in the shell history and the process list). A token's secret is printed once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import typer

from trace_app.cli_support import fail, operator, trace_settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

T = TypeVar("T")

user_app = typer.Typer(help="Accounts: users, roles, passwords.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens for machine clients.", no_args_is_help=True)

ROLE_HELP = "viewer, reporter, reviewer, coordinator or admin (docs/trace.md)."


def _password(from_stdin: bool) -> str:
    if from_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
    else:
        value = typer.prompt("Password (at least 12 characters)", hide_input=True)
        again = typer.prompt("The same password again", hide_input=True)
        if value != again:
            fail("the two passwords differ; nothing was changed")
    return value


def _run(change: Callable[[Session], T]) -> T:
    """Run ``change(session)`` in an audited transaction; domain refusals exit 2."""
    from trace_app.domain.audit import require_audit
    from trace_app.domain.errors import TraceError
    from trace_app.store.db import Database

    db = Database.from_settings(trace_settings())
    try:
        with require_audit(db.sessions()) as session:
            try:
                result = change(session)
                session.commit()
            except TraceError as exc:
                session.rollback()
                fail(str(exc))
            return result
    finally:
        db.dispose()


@user_app.command("create")
def user_create(
    name: str = typer.Argument(..., help="The sign-in name (letters, digits, . _ - @)."),
    role: str = typer.Option(..., "--role", help=ROLE_HELP),
    organization: str = typer.Option(
        "", "--organization", help="The organisation they act for (a reporter needs one)."
    ),
    incident: str = typer.Option(
        "", "--incident", help="Only this incident (its id); default: every incident."
    ),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from standard input."
    ),
) -> None:
    """Create a user with a role. The first admin of a deployment is made this way."""
    from trace_app.accounts.users import NewMembership, create_user

    password = _password(password_stdin)
    membership = NewMembership(role, organization or None, incident or None)
    _run(lambda s: create_user(s, operator(), name, password, membership))
    scope = f"incident {incident}" if incident else "every incident"
    typer.echo(f"Created {name}: {role} in {scope}.")


@user_app.command("role")
def user_role(
    name: str = typer.Argument(...),
    role: str = typer.Option(..., "--role", help=ROLE_HELP),
    organization: str = typer.Option("", "--organization", help="The organisation."),
    incident: str = typer.Option("", "--incident", help="Only this incident (its id)."),
) -> None:
    """Give a user a role (in one incident, or every incident); their sessions end."""
    from trace_app.accounts.users import NewMembership, get_user, set_membership

    membership = NewMembership(role, organization or None, incident or None)
    _run(lambda s: set_membership(s, operator(), get_user(s, name), membership))
    typer.echo(f"{name} is now {role}; their sessions were signed out.")


@user_app.command("remove-role")
def user_remove_role(
    name: str = typer.Argument(...),
    incident: str = typer.Option("", "--incident", help="That incident's membership."),
) -> None:
    """Remove a membership (default: the one for every incident)."""
    from trace_app.accounts.users import get_user, remove_membership

    _run(lambda s: remove_membership(s, operator(), get_user(s, name), incident or None))
    typer.echo(f"Removed the membership of {name}.")


@user_app.command("password")
def user_password(
    name: str = typer.Argument(...),
    password_stdin: bool = typer.Option(False, "--password-stdin"),
) -> None:
    """Set a new password; every session of the user ends."""
    from trace_app.accounts.users import get_user, set_password

    password = _password(password_stdin)
    _run(lambda s: set_password(s, operator(), get_user(s, name), password))
    typer.echo(f"New password set for {name}; their sessions were signed out.")


@user_app.command("disable")
def user_disable(name: str = typer.Argument(...)) -> None:
    """Switch an account off (its sessions end, its tokens stop working)."""
    from trace_app.accounts.users import get_user, set_disabled

    _run(lambda s: set_disabled(s, operator(), get_user(s, name), True))
    typer.echo(f"{name} is switched off.")


@user_app.command("enable")
def user_enable(name: str = typer.Argument(...)) -> None:
    from trace_app.accounts.users import get_user, set_disabled

    _run(lambda s: set_disabled(s, operator(), get_user(s, name), False))
    typer.echo(f"{name} is switched on.")


@user_app.command("list")
def user_list() -> None:
    """Every user with their memberships."""
    from trace_app.accounts.users import list_users

    def rows(session: Session) -> list[str]:
        found: list[str] = []
        for user in list_users(session):
            roles = "; ".join(
                f"{m.role} in {'every incident' if m.scope == '*' else m.scope}"
                + (f" for {m.organization.name}" if m.organization else "")
                for m in user.memberships
            )
            state = " (switched off)" if user.disabled else ""
            found.append(f"{user.name}{state}\t{roles or 'no role'}")
        return found

    lines = _run(rows)
    if not lines:
        typer.echo("No users. Create the first admin: trace user create NAME --role admin")
    for line in lines:
        typer.echo(line)


@token_app.command("create")
def token_create(
    user: str = typer.Argument(..., help="The user the token acts for."),
    scope: list[str] = typer.Option(
        ..., "--scope", help="A permission it may use, e.g. read, pfif:read (repeat)."
    ),
    name: str = typer.Option("token", "--name", help="What the token is for."),
    expires: int | None = typer.Option(None, "--expires", help="Days until it expires."),
) -> None:
    """Make an API token; its secret is printed once and only its hash is kept."""
    from trace_app.accounts import tokens
    from trace_app.accounts.users import get_user

    def make(session: Session) -> tuple[str, str]:
        token, secret = tokens.create(
            session, operator(), get_user(session, user), name, scope, expires
        )
        return token.id, secret

    token_id, secret = _run(make)
    typer.echo(f"Token {token_id} for {user} (shown only now; send it as 'Authorization: Bearer'):")
    typer.echo(secret)


@token_app.command("revoke")
def token_revoke(
    token_id: str = typer.Argument(..., help="The token's id (trace token list)."),
) -> None:
    """Revoke a token: it answers 401 from now on."""
    from trace_app.accounts import tokens

    _run(lambda s: tokens.revoke(s, operator(), token_id))
    typer.echo(f"Revoked {token_id}.")


@token_app.command("list")
def token_list() -> None:
    """Every token, without its secret (which is not kept)."""
    from trace_app.accounts import tokens

    def rows(session: Session) -> list[str]:
        return [
            f"{t.id}\t{t.prefix}…\t{t.user.name}\t{t.name}\t{','.join(t.scopes)}\t"
            + (
                "revoked"
                if t.revoked_at
                else f"expires {t.expires_at:%Y-%m-%d}"
                if t.expires_at
                else "no expiry"
            )
            for t in tokens.list_tokens(session)
        ]

    lines = _run(rows)
    if not lines:
        typer.echo("No tokens.")
    for line in lines:
        typer.echo(line)


def audit(
    since: datetime | None = typer.Option(
        None, "--since", help="From this time (UTC), e.g. 2026-12-01."
    ),
    actor: str = typer.Option("", "--actor", help="Only this actor's rows."),
    action: str = typer.Option(
        "", "--action", help="Only this action (or a prefix ending in '.')."
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line."),
) -> None:
    """The audit trail, oldest first: who did what, when, to which objects."""
    from trace_app.domain.audit_queries import AuditFilter, audit_since
    from trace_app.store.types import as_utc

    wanted = AuditFilter(actor=actor, action=action, since=as_utc(since) if since else None)

    def rows(session: Session) -> list[str]:
        out: list[str] = []
        for e in audit_since(session, wanted):
            if as_json:
                out.append(
                    json.dumps(
                        {
                            "sequence": e.sequence,
                            "at": e.at.isoformat(),
                            "actor": e.actor_name,
                            "actor_kind": e.actor_kind,
                            "action": e.action,
                            "outcome": e.outcome,
                            "incident_id": e.incident_id,
                            "object": f"{e.object_type}:{e.object_id}",
                            "touched": e.touched,
                            "before": e.before,
                            "after": e.after,
                            "client": e.client,
                        },
                        ensure_ascii=False,
                    )
                )
            else:
                out.append(
                    f"{e.at:%Y-%m-%d %H:%M:%S} {e.actor_name}: {e.action}"
                    + (f" [{e.outcome}]" if e.outcome != "ok" else "")
                    + f" {e.object_type}:{e.object_id}"
                )
        return out

    for line in _run(rows):
        typer.echo(line)
