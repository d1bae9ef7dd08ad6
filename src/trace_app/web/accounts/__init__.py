"""Accounts: signing in and out, the account page, members of an incident, the audit trail,
the API's description.
"""
