"""Real accounts for the benchmarks that call the web app (imported as a sibling module).

``admin_headers(app)`` makes an admin of every incident with a real Argon2id password and
a bearer token with every scope, and returns the ``Authorization`` header to send.
"""

from __future__ import annotations

import secrets

from trace_app.accounts import tokens
from trace_app.accounts.permissions import Permission
from trace_app.accounts.users import NewMembership, create_user
from trace_app.domain.audit import Actor, require_audit
from trace_app.store.db import Database

BENCH = Actor.operator("benchmark")


def admin_headers(db: Database, organization: str = "Central Hospital Demo") -> dict[str, str]:
    name = f"bench-{secrets.token_hex(4)}"
    with require_audit(db.sessions()) as session:
        user = create_user(
            session, BENCH, name, secrets.token_urlsafe(16), NewMembership("admin", organization)
        )
        _token, secret = tokens.create(session, BENCH, user, "bench", [p.value for p in Permission])
        session.commit()
    return {"Authorization": f"Bearer {secret}"}
