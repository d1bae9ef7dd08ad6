"""Report investigation: how one source report attributes its information.

The model only labels; this package decides, records and never changes claims, people or
alerts. It is a plain part of Trace: the app factory (``trace_app.web.app``) mounts its
routes, ``trace_app.cli`` registers its commands and ``trace_app.demo_reset`` re-creates
its REPLAYED runs after every Reset.
"""
