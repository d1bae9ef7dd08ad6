"""The `viano` command."""

import typer

app = typer.Typer(help="Viano bug analysis.", no_args_is_help=True)


@app.callback()
def main() -> None:
    """Viano bug analysis."""
