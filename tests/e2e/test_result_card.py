"""The result card in a real browser: plain words first, the report text with each
attribution cue marked and labelled, the technical details folded until opened.

The seeded reports carry REPLAYED runs (recorded real runs), re-decided with today's
rules when shown, so no model and no passphrase are needed here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser


def _report_id(server: Any, starts: str) -> str:
    incident = server.incident_id()
    reports = server.api("GET", f"/api/incidents/{incident}/reports?limit=500")["items"]
    found: str = next(r["id"] for r in reports if r["original_text"].startswith(starts))
    return found


def test_card_marks_the_cues_and_folds_the_technical_details(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    report_id = _report_id(live_server, "Duty officer's log")
    api = live_server.api("GET", f"/api/reports/{report_id}/investigation")
    assert api["mode"] == "REPLAYED" and api["status"] == "NEEDS_REVIEW"
    assert {c["kind"] for c in api["evidence"]} == {"hearsay", "first_hand"}

    page.goto(live_server.url(f"/reports/{report_id}"))
    card = page.locator("#investigation-card")
    card.wait_for()
    assert card.get_attribute("data-status") == "NEEDS_REVIEW"

    # plain words first: the one reason that applies, why (quoting the cue), what to do
    shown = card.inner_text()
    assert shown.index("Needs a person to check") < shown.index("What to do next")
    assert "'They say'" in card.locator(".reason").inner_text()

    # every cue is marked in the text, labelled by its kind, and listed
    marks = card.locator("blockquote.evidence-text mark.cue")
    found = {(m.get_attribute("data-kind"), m.inner_text()) for m in marks.all()}
    assert ("hearsay", "They say") in found and ("first_hand", "in person") in found
    hearsay = card.locator("mark.cue-hearsay").first
    assert hearsay.get_attribute("title") == "vague or unconfirmed sourcing"
    assert hearsay.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
    listed = card.locator("ul.cue-list li").all_inner_texts()
    assert any("They say" in item and "unconfirmed" in item for item in listed)

    # technical details are folded: hidden until the summary is clicked
    details = card.locator("details.technical")
    fingerprint = details.locator(".fingerprint")
    assert not fingerprint.is_visible()
    assert not details.locator(".prompt-version").is_visible()
    details.locator("summary").click()
    assert fingerprint.is_visible() and api["fingerprint"] in fingerprint.inner_text()
    assert details.locator(".rules-version").inner_text() == api["rules_version"]
    assert details.locator(".mode-meaning").is_visible()
    screenshot(page, "result-card-cues-and-details")


def test_a_relay_shows_its_cues(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    report_id = _report_id(live_server, "Please share.")
    page.goto(live_server.url(f"/reports/{report_id}"))
    card = page.locator("#investigation-card")
    card.wait_for()
    kinds = {m.get_attribute("data-kind") for m in card.locator("mark.cue").all()}
    assert {"relay", "hearsay"} <= kinds
    # the recording labelled it DIRECT yet named the police: the consistency rule
    assert "Nepal Police Demo" in card.locator(".reason").inner_text()
    assert card.locator("ul.cue-list li").count() == card.locator("mark.cue").count()
    screenshot(page, "result-card-relay")
