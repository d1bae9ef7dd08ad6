"""Coordinators' pages of issue 41: follow-ups after a death, failed deliveries."""
