"""No-JS Investigate is Post/Redirect/Get: a reload never sends a check again.

The form used to render the result in place, so each browser reload posted the check
again (a FAILED report's ledger went 9, 10, 11, 12). Now the POST answers 303 to the
report page, which shows that check's result; reloading it asks nothing.
"""

from __future__ import annotations

import re

from accounts_helpers import csrf, signed_in_with

from modelgate.providers import ScriptedProvider
from trace_app.investigation.model_settings import NEMOTRON_MODEL
from trace_app.settings import TraceSettings
from trace_app.web.app import create_app

from .conftest import PASSPHRASE


def test_no_js_check_redirects_and_a_reload_sends_nothing(sqlite_settings: TraceSettings) -> None:
    provider = ScriptedProvider(model=NEMOTRON_MODEL)
    provider.add({"attribution": "LOST", "referenced_source": "NONE"})  # out of set: FAILED
    app = create_app(sqlite_settings)
    app.state.investigation.provider_factory = lambda _config: provider
    with signed_in_with(app, base_url="http://127.0.0.1", follow_redirects=False) as http:
        incident = http.get("/api/incidents").json()["items"][0]["id"]
        report = http.get(f"/api/incidents/{incident}/reports").json()["items"][-1]["id"]
        http.get(f"/reports/{report}")
        token = csrf(http)
        posted = http.post(
            f"/reports/{report}/investigate", data={"passphrase": PASSPHRASE, "csrf_token": token}
        )
        assert posted.status_code == 303
        location = posted.headers["location"]
        assert re.fullmatch(rf"/reports/{report}\?check=[\w-]+#investigate-heading", location)
        assert PASSPHRASE not in location and PASSPHRASE not in posted.text
        counted = http.get("/api/ledger").json()["requests"]
        assert counted == 1 and len(provider.requests) == 1
        for _reload in range(3):
            page = http.get(location.split("#")[0])
            assert page.status_code == 200
            assert 'data-status="FAILED"' in page.text
            assert 'value=""' in page.text and PASSPHRASE not in page.text
        assert http.get("/api/ledger").json()["requests"] == counted
        assert len(provider.requests) == 1
        # a token for another report, or a made-up one, shows nothing of it
        other = http.get(f"/reports/{report}", params={"check": "made-up"})
        assert 'data-status="FAILED"' not in other.text
