"""Accounts: users, memberships (role, organisation, incident), server-side sessions, API
tokens, and the one permission table (:mod:`trace_app.accounts.permissions`).

The web layer resolves a :class:`~trace_app.accounts.principal.Principal` from a session
cookie or a bearer token and asks it ``can(permission, incident_id)``; every change made
here is audited through :mod:`trace_app.domain.audit`.
"""
