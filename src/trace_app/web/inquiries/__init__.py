"""Tracing requests and follow-ups over the API (issue 41)."""
