"""The enquirer's pages reached from mail: confirm the address, unsubscribe (issue 41)."""
