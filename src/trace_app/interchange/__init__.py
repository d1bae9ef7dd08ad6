"""Trace's interchange formats, with no database: PFIF 1.1-1.4 (read) and 1.4 (write),
and shelter lists as CSV. See docs/interchange.md."""
