"""Trace's web layer: FastAPI pages (Jinja2 + htmx) and the JSON API."""
