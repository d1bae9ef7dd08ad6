"""Duplicates: the incident's queue of possible duplicates, decided pair by pair."""
