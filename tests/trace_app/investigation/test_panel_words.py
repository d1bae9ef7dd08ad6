"""Words a volunteer understands (issue 40, items 2-4) on the Investigate panel and in the
glossary: every code has plain words, the one reason that applies is given, a decided
result looks decided, times read "2 Dec, 14:05 (Kathmandu)", each press of Investigate
says what it did (a wrong passphrase too, when a saved result is shown), and a member
who may not run a check sees who can instead of a button that fails silently."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import csrf, signed_in_with
from fastapi.testclient import TestClient

from modelgate.providers import ScriptedProvider
from trace_app import glossary
from trace_app.accounts.permissions import Permission, Role
from trace_app.domain.reviews import ReviewValue
from trace_app.domain.time_zones import format_day, format_exact, format_friendly, zone_label
from trace_app.investigation.answers import Attribution, Support
from trace_app.investigation.attribution_cues import Cue, CueKind
from trace_app.investigation.model_settings import NEMOTRON_MODEL
from trace_app.investigation.outcome import InvestigationResult
from trace_app.investigation.vocabulary import Mode, Status
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import AlertCloseReason, AlertState, ClaimStatus, LinkDecision
from trace_app.web.app import create_app
from trace_app.web.evidence_view import check_outcome, result_summary

from .conftest import PASSPHRASE, make_service, police_report_id

COVERED = {
    "check_status": Status,
    "check_mode": Mode,
    "attribution": Attribution,
    "support": Support,
    "claim_status": ClaimStatus,
    "alert_state": AlertState,
    "alert_close_reason": AlertCloseReason,
    "link_decision": LinkDecision,
    "review_decision": ReviewValue,
    "cue_kind": CueKind,
    "role": Role,
    "permission": Permission,
}


def _placeholders(text: str) -> list[str | None]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def test_every_code_shown_to_people_has_a_phrase_and_one_sentence() -> None:
    assert set(COVERED) == set(glossary.TABLES)
    for table, codes in COVERED.items():
        assert set(glossary.TABLES[table]) == {code.value for code in codes}, table
        for code in codes:
            words = glossary.term(table, code.value)
            assert words.phrase and words.sentence.endswith("."), (table, code)
            assert code.value not in (words.phrase, words.sentence) or code.value.islower()
    # whole sentences with named placeholders only (issue 42 translates them)
    texts = [
        t for tab in glossary.TABLES.values() for w in tab.values() for t in (w.phrase, w.sentence)
    ]
    texts += [*glossary.NEEDS_REVIEW_REASONS.values(), *glossary.CHECK_OUTCOME.values()]
    texts += [*glossary.PUBLISHED.values(), *glossary.LINKED.values()]
    texts += [*glossary.LINKED_ALERT_CLOSED.values()]
    for text in texts:
        assert "" not in _placeholders(text), text


def _result(**fields: Any) -> InvestigationResult:
    base: dict[str, Any] = {
        "report_id": "rep_w",
        "status": Status.NEEDS_REVIEW,
        "reason": "Because.",
        "mode": Mode.LIVE,
        "saved": True,
    }
    return InvestigationResult(**{**base, **fields})


class _Review:
    def __init__(self, decision: ReviewValue, on_shown_run: bool = True) -> None:
        self.decision = decision
        self.on_shown_run = on_shown_run


POLICE = "Nepal Police Demo"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"attribution": "RELAY", "referenced_source": POLICE},
            f"Needs a person to check: the report passes on what {POLICE} said",
        ),
        (
            {"attribution": "RELAY", "referenced_source": POLICE, "support": "DIFFERS"},
            f"Needs a person to check: the report passes on what {POLICE} said, but "
            f"{POLICE}'s report says something different",
        ),
        (
            {"attribution": "RELAY", "referenced_source": "NONE"},
            "Needs a person to check: the report passes on information without naming its source",
        ),
        (
            {"attribution": "UNCLEAR", "referenced_source": "NONE"},
            "Needs a person to check: it is unclear where the information came from",
        ),
        (
            {
                "attribution": "DIRECT",
                "referenced_source": "NONE",
                "lowered_by": ("hearsay",),
                "evidence": (Cue(0, 8, CueKind.HEARSAY, "They say", "en"),),
            },
            "Needs a person to check: the words “They say” are vague about the source",
        ),
        ({"status": Status.COMPLETED}, "Reads as first-hand"),
        ({"status": Status.BUDGET_LIMIT, "mode": None, "saved": False}, "Model budget used up"),
    ],
)
def test_the_card_says_the_one_reason_that_applies(fields: dict[str, Any], expected: str) -> None:
    assert result_summary(_result(**fields), None) == expected


def test_a_decided_result_says_decided_and_an_earlier_decision_does_not_count() -> None:
    result = _result(attribution="RELAY", referenced_source=POLICE)
    decided = _Review(ReviewValue.RELAY_CONFIRMED)
    assert result_summary(result, decided) == "Decided: Relay confirmed"
    earlier = _Review(ReviewValue.RELAY_CONFIRMED, on_shown_run=False)
    assert result_summary(result, earlier).startswith("Needs a person")


KATHMANDU = "Asia/Kathmandu"
MOMENT = datetime(2026, 12, 2, 8, 20, tzinfo=UTC)
NOW = datetime(2026, 12, 4, tzinfo=UTC)


def test_times_read_as_people_say_them_with_the_exact_time_on_request() -> None:
    assert format_friendly(MOMENT, KATHMANDU, now=NOW) == "2 Dec, 14:05 (Kathmandu)"
    assert format_friendly(MOMENT, None, now=NOW) == "2 Dec, 08:20 (UTC)"
    old = datetime(2015, 4, 25, 8, 45, tzinfo=UTC)
    assert format_friendly(old, KATHMANDU, now=NOW) == "25 Apr 2015, 14:30 (Kathmandu)"
    assert format_day(MOMENT, KATHMANDU, now=NOW) == "2 Dec"
    assert zone_label("America/Argentina/Buenos_Aires") == "Buenos Aires"
    exact = "2026-12-02 14:05:00 +05:45 · 2026-12-02 08:20:00 UTC"
    assert format_exact(MOMENT, KATHMANDU) == exact
    assert format_exact(MOMENT, "UTC") == "2026-12-02 08:20:00 UTC"


def _outcome(result: InvestigationResult, *, typed: bool, ok: bool) -> str:
    return check_outcome(result, typed=typed, passphrase_ok=ok, live_enabled=True, day="2 Dec")


def test_each_press_of_investigate_says_what_it_did() -> None:
    cached = _result(mode=Mode.CACHED)
    assert _outcome(cached, typed=False, ok=False).startswith(
        "Checked earlier (2 Dec) with exactly this text, so nothing was sent"
    )
    wrong = _outcome(cached, typed=True, ok=False)
    assert wrong.startswith("The passphrase was wrong, so nothing was sent") and "2 Dec" in wrong
    assert _outcome(_result(mode=Mode.LIVE), typed=True, ok=True).startswith("Checked now")
    refused = _result(status=Status.UNAVAILABLE, mode=None, saved=False, reason="No key.")
    assert _outcome(refused, typed=False, ok=False) == glossary.CHECK_OUTCOME["no_passphrase"]


@pytest.fixture
def app(tmp_path: Path, db: Database, ledger_path: Path) -> Iterator[Any]:
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    built = create_app(settings, db=db)
    provider = ScriptedProvider(model=NEMOTRON_MODEL, name="nim")
    built.state.investigation = make_service(db, ledger_path, provider)
    built.state.test_provider = provider
    yield built


def _press(client: TestClient, report_id: str, passphrase: str) -> Any:
    return client.post(
        f"/reports/{report_id}/investigate",
        data={"passphrase": passphrase, "csrf_token": csrf(client)},
        headers={"HX-Request": "true"},
    )


def _said(fragment: str) -> str:
    found = re.search(r'<p id="check-outcome"[^>]*hx-swap-oob="innerHTML">([^<]*)</p>', fragment)
    assert found, fragment[-600:]
    return found.group(1).replace("&#39;", "'")


def test_the_panel_says_what_each_press_did_a_wrong_passphrase_included(
    app: Any, db: Database
) -> None:
    report_id = police_report_id(db)
    provider: ScriptedProvider = app.state.test_provider
    provider.add({"attribution": "RELAY", "referenced_source": "NONE"})
    with signed_in_with(app, role="reviewer", base_url="http://127.0.0.1") as http:
        page = http.get(f"/reports/{report_id}").text
        assert 'hx-indicator="#investigate-busy"' in page and 'id="check-outcome"' in page
        first = _press(http, report_id, PASSPHRASE)
        assert first.status_code == 200
        assert _said(first.text).startswith("Checked now")
        assert "Needs a person to check: the report passes on information" in first.text

        today = format_day(datetime.now(UTC), None)  # the demo incident is in UTC
        again = _press(http, report_id, "")
        assert _said(again.text).startswith(f"Checked earlier ({today}) with exactly this text")

        wrong = _press(http, report_id, "not the passphrase")
        said = _said(wrong.text)
        assert said.startswith("The passphrase was wrong, so nothing was sent")
        assert f"({today})" in said and 'data-mode="CACHED"' in wrong.text
        # without JavaScript: the page the form redirects to says the same
        plain = http.post(
            f"/reports/{report_id}/investigate",
            data={"passphrase": "not it either", "csrf_token": csrf(http)},
            follow_redirects=False,
        )
        assert plain.status_code == 303
        shown = http.get(plain.headers["location"]).text.replace("&#39;", "'")
        assert "The passphrase was wrong, so nothing was sent" in shown
        assert len(provider.requests) == 1  # one model call in all
        # a reporter reads the saved result, and who can decide on it, not a form
        reporter = signed_in_with(app, role="reporter", base_url="http://127.0.0.1")
        theirs = reporter.get(f"/reports/{report_id}").text
        assert "Needs a person to check" in theirs and 'class="review-form"' not in theirs
        assert "You cannot decide on checked reports here." in theirs
        assert 'class="review-form"' in http.get(f"/reports/{report_id}").text


def test_a_reporter_sees_who_can_check_and_a_refusal_is_said_in_words(
    app: Any, db: Database
) -> None:
    report_id = police_report_id(db)
    with signed_in_with(app, role="reporter", base_url="http://127.0.0.1") as http:
        page = http.get(f"/reports/{report_id}").text
        assert 'id="investigate-button"' not in page
        assert "a reviewer, coordinator or admin of this incident can" in page
        refused = _press(http, report_id, PASSPHRASE)  # a stale page, say
        assert refused.status_code == 200
        assert _said(refused.text).startswith("You cannot run a new check")
        plain = http.post(
            f"/reports/{report_id}/investigate",
            data={"passphrase": PASSPHRASE, "csrf_token": csrf(http)},
        )
        assert plain.status_code == 403  # without htmx: the error page, as before
