"""Case interpretation v1 (see docs/case-interpretation.md)."""
