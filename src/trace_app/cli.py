"""The `trace` command."""

import typer

app = typer.Typer(help="Trace: disaster people-tracing.", no_args_is_help=True)


@app.callback()
def main() -> None:
    """Trace: disaster people-tracing."""
