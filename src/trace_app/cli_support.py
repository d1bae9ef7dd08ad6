"""What every ``trace`` subcommand shares: Trace's and the model's settings, each read
once with a clean exit on a bad value, and the database named without its password.

Each subcommand module imports this one; it imports none of them, and nothing heavy
(SQLAlchemy is loaded only when a database is described), so ``trace --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import typer

from trace_app.settings import SettingsError, TraceSettings

if TYPE_CHECKING:
    from trace_app.domain.audit import Actor
    from trace_app.investigation.model_settings import ModelSettings


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and end the command with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def trace_settings() -> TraceSettings:
    """Trace's settings from the environment; exit 2 with the reason when one is unusable."""
    try:
        return TraceSettings.from_env()
    except SettingsError as exc:
        fail(str(exc))


def model_settings() -> ModelSettings:
    """The model's settings from the environment; exit 2 with the reason when unusable.
    (Imported here, not at the top: the model clients are heavy, ``trace --help`` is not.)"""
    from trace_app.investigation.model_settings import ModelSettings, ModelSettingsError

    try:
        return ModelSettings.from_env()
    except ModelSettingsError as exc:
        fail(str(exc))


def operator() -> Actor:
    """Who acts at the command line: the operator, named by their login on this machine
    (the commands run on the server, where whoever can run them can read the database)."""
    import getpass

    from trace_app.domain.audit import Actor

    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = "unknown login"
    return Actor.operator(f"command line, {login}")


def for_host(settings: TraceSettings, host: str) -> TraceSettings:
    """Settings for a server bound to ``host``: without ``TRACE_ALLOWED_HOSTS`` it answers
    only to the name it is bound to (and ``localhost`` beside a loopback address). Bound to
    every interface, it needs the list: exit 2 with the reason."""
    import dataclasses

    if settings.allowed_hosts:
        return settings
    if host in {"0.0.0.0", "::", ""}:  # noqa: S104 (a message, not a bind)
        fail(
            "bound to every interface: set TRACE_ALLOWED_HOSTS to the host names clients use "
            "(for example trace.example.org), so a DNS-rebinding page cannot reach the server"
        )
    names = (host, "localhost") if host in {"127.0.0.1", "::1", "localhost"} else (host,)
    return dataclasses.replace(settings, allowed_hosts=tuple(dict.fromkeys(names)))


def prepare_accounts(settings: TraceSettings) -> None:
    """Before serving: on a demo server, give the demo accounts new passwords and print
    them (like the passphrase, only here); elsewhere, say so when no account exists yet."""
    from trace_app.accounts.demo_accounts import reset_demo_accounts
    from trace_app.accounts.users import count_users
    from trace_app.domain.audit import Actor, require_audit
    from trace_app.store.db import Database

    db = Database.from_settings(settings)
    try:
        with require_audit(db.sessions()) as session:
            if settings.demo:
                accounts = reset_demo_accounts(session, Actor.system("demo start-up"))
                session.commit()
                typer.echo("Demo accounts (passwords made for this run, shown only now):")
                for account in accounts:
                    org = f", {account.organization}" if account.organization else ""
                    typer.echo(f"  {account.name:<17} {account.password}  ({account.role}{org})")
            elif count_users(session) == 0:
                typer.echo(
                    "No accounts yet: nobody can sign in. Create the first admin with\n"
                    "  trace user create NAME --role admin"
                )
    finally:
        db.dispose()


def describe_database(settings: TraceSettings) -> str:
    """The database URL without a password."""
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)
