"""Wrong passphrases are throttled per client address and overall, with no ledger change.

Sixty wrong passphrases in a row used to be answered one by one. Now the sixth in a
minute from one address, or the thirty-first from everybody, gets 429 with Retry-After
and a plain message; nothing is checked, no model is asked, the ledger is untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import csrf, signed_in_with
from fastapi.testclient import TestClient

from trace_app.settings import SettingsError, TraceSettings
from trace_app.web.app import create_app
from trace_app.web.throttle import PassphraseThrottle

from .conftest import PASSPHRASE


def settings_for(url: str, home: Path, **limits: str) -> TraceSettings:
    return TraceSettings(home=home, database_url=url, demo=True, **limits)


def client(app: Any, address: str = "198.51.100.7") -> TestClient:
    """Signed in (a new admin) from ``address``."""
    return signed_in_with(
        app, base_url="http://127.0.0.1", client=(address, 50000), follow_redirects=True
    )


def first_report(http: TestClient) -> str:
    incident = http.get("/api/incidents").json()["items"][0]["id"]
    found: str = http.get(f"/api/incidents/{incident}/reports").json()["items"][-1]["id"]
    return found


def guess(http: TestClient, report_id: str, passphrase: str) -> Any:
    return http.post(f"/api/reports/{report_id}/investigate", json={"passphrase": passphrase})


@pytest.fixture
def web(sqlite_settings: TraceSettings) -> Iterator[TestClient]:
    with client(create_app(sqlite_settings)) as http:
        yield http


def test_sixth_wrong_passphrase_in_a_minute_is_429(web: TestClient) -> None:
    report = first_report(web)
    ledger_before = web.get("/api/ledger").json()
    answers = [guess(web, report, f"wrong-{n}") for n in range(5)]
    assert [a.status_code for a in answers] == [200] * 5
    assert all(a.json()["status"] == "UNAVAILABLE" for a in answers)
    for attempt in (guess(web, report, "wrong-6"), guess(web, report, PASSPHRASE)):
        assert attempt.status_code == 429
        assert attempt.json()["code"] == "too_many_attempts"
        assert "Too many wrong passphrases from this address" in attempt.json()["detail"]
        assert 1 <= int(attempt.headers["retry-after"]) <= 60
        assert PASSPHRASE not in attempt.text
    assert web.get("/api/ledger").json() == ledger_before
    # no passphrase (showing a saved run) is never throttled
    assert guess(web, report, "").status_code == 200


def test_the_form_is_throttled_too(web: TestClient) -> None:
    report = first_report(web)
    web.get(f"/reports/{report}")
    token = csrf(web)
    for _ in range(5):
        web.post(f"/reports/{report}/investigate", data={"csrf_token": token, "passphrase": "x"})
    page = web.post(f"/reports/{report}/investigate", data={"csrf_token": token, "passphrase": "y"})
    assert page.status_code == 429 and "retry-after" in page.headers
    assert "Too many wrong passphrases" in page.text
    fragment = web.post(
        f"/reports/{report}/investigate",
        data={"csrf_token": token, "passphrase": "z"},
        headers={"HX-Request": "true"},
    )
    assert fragment.status_code == 429 and 'id="throttled"' in fragment.text


def test_overall_ceiling_covers_every_address(
    sqlite_settings: TraceSettings, tmp_path: Path
) -> None:
    settings = settings_for(
        sqlite_settings.database_url, sqlite_settings.home, guess_limit_overall="4/minute"
    )
    app = create_app(settings)
    for n in range(4):
        with client(app, f"203.0.113.{n}") as http:
            assert guess(http, first_report(http), "wrong").status_code == 200
    with client(app, "203.0.113.99") as fresh:
        refused = guess(fresh, first_report(fresh), "wrong")
    assert refused.status_code == 429 and "on this server" in refused.json()["detail"]


def test_bad_limit_setting_is_refused() -> None:
    with pytest.raises(SettingsError):
        TraceSettings.from_env(env={"TRACE_PASSPHRASE_LIMIT": "lots"})


@pytest.mark.postgres
def test_replicas_on_one_postgres_keep_their_own_counts_unless_storage_is_shared(
    pg_schema_url: str, tmp_path: Path
) -> None:
    """Two replicas on one PostgreSQL database. With the default ``memory://`` storage the
    counts are per replica (documented: R replicas allow R times the limit); with one
    shared ``limits`` storage (here one object standing in for redis://) they add up."""
    first = create_app(settings_for(pg_schema_url, tmp_path / "a"))
    second = create_app(settings_for(pg_schema_url, tmp_path / "b"))
    with client(first) as a, client(second) as b:
        report = first_report(a)
        assert [guess(a, report, "wrong").status_code for _ in range(6)][-1] == 429
        assert guess(b, report, "wrong").status_code == 200  # its own count

        shared = PassphraseThrottle()
        first.state.passphrase_throttle = shared
        second.state.passphrase_throttle = shared
        codes = [guess(x, report, "wrong").status_code for x in (a, b, a, b, a, b)]
        assert codes == [200, 200, 200, 200, 200, 429]
        assert a.get("/api/ledger").json()["requests"] == 0
