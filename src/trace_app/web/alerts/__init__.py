"""Alerts: an incident's alerts, closing and reopening one."""
