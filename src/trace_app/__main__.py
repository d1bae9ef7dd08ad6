"""``python -m trace_app`` runs the ``trace`` command."""

from trace_app.cli import app

app(prog_name="trace")
