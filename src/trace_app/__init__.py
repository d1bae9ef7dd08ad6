"""Trace: disaster people-tracing with report investigation."""
