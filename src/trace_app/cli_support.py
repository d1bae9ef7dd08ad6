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


def describe_database(settings: TraceSettings) -> str:
    """The database URL without a password."""
    from sqlalchemy.engine import make_url

    return make_url(settings.database_url).render_as_string(hide_password=True)
