"""The ``trace`` command: the root Typer app and the one table of its subcommands.

Each subcommand lives in a module of its own and is registered below, at the top level
of this module; those modules import :mod:`trace_app.cli_support` for what they share,
never this module. To add a subcommand, write it in its own module (a function for a
command, a ``typer.Typer`` for a group) and add one line to the table.

Heavy libraries (SQLAlchemy, FastAPI, uvicorn, the model clients) are imported inside
the commands that need them, so ``trace --help`` stays fast. Every command works from
any folder: the default SQLite file lives under ``.trace-local/`` of the current folder
unless ``TRACE_HOME`` or ``DATABASE_URL`` says otherwise.
"""

from __future__ import annotations

import typer

from trace_app import (
    accounts_cli,
    incident_cli,
    inquiries_cli,
    interchange_cli,
    local_cli,
    server_cli,
)
from trace_app.investigation import cli as investigation_cli

app = typer.Typer(help="Trace: disaster people-tracing.", no_args_is_help=True)


@app.callback()
def main() -> None:
    """Trace: disaster people-tracing."""


# --- the subcommands of `trace`: one line per command or group ------------------------
app.command("serve")(server_cli.serve)
app.command("reset")(server_cli.reset)
app.command("worker")(server_cli.worker)
app.add_typer(incident_cli.app, name="incident")
app.command("investigate")(investigation_cli.investigate)
app.command("ledger")(investigation_cli.ledger)
app.command("record-demo")(investigation_cli.record_demo)
app.command("demo")(local_cli.demo)
app.command("eval")(local_cli.eval_command)
app.add_typer(interchange_cli.pfif_app, name="pfif")
app.add_typer(interchange_cli.import_app, name="import")
app.add_typer(accounts_cli.user_app, name="user")
app.add_typer(accounts_cli.token_app, name="token")
app.command("audit")(accounts_cli.audit)
app.add_typer(inquiries_cli.app, name="inquiries")


if __name__ == "__main__":
    app()
