"""Interchange: PFIF and CSV over the API, and the Import and Export pages."""
