"""Words a volunteer understands, in a real browser at 390 and 1280 px (issue 40, items
2-4): the result card says the one reason that applies with the codes folded away; the
report page after Publish says what changed; the person page puts the status first and
reads times as "15 Jul, 14:30 (UTC)" with the exact time one tick away; a reporter sees
who can run a check instead of an Investigate button that would fail silently.

Screenshots: test-artifacts/screenshots/plain-words-*-{phone,desktop}.png."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}
CODES = ("NEEDS_REVIEW", "REPLAYED", "CACHED", "UNAVAILABLE", "alerts:write", "checks:run")


def _words_css(page: Any) -> None:
    """The stylesheet the pages link from base.html (added here only where a base.html
    without the link is being tested, so the screenshots show what people see)."""
    if page.locator('link[href="/static/words.css"]').count() == 0:
        page.add_style_tag(url="/static/words.css")


def _readable(locator: Any) -> str:
    """What a reader sees: the visible text, folded details left out."""
    text: str = locator.inner_text()
    return text


def _both(page: Any, screenshot: Callable[[Any, str], Path], name: str) -> None:
    """Screenshots of the page at 390 and at 1280 px (one load: the layout reflows)."""
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        screenshot(page, f"plain-words-{name}-{size}")
    page.set_viewport_size(SIZES["phone"])


def test_plain_words_on_the_card_the_report_and_the_person(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    page.set_viewport_size(SIZES["phone"])
    incident = live_server.incident_id()
    reports = live_server.api("GET", f"/api/incidents/{incident}/reports?limit=500")["items"]
    relay = next(r for r in reports if r["original_text"].startswith("Please share."))

    # the card: the one reason that applies first, the codes only in the folded details
    page.goto(live_server.url(f"/reports/{relay['id']}"))
    _words_css(page)
    card = page.locator("#investigation-card")
    headline = card.locator(".investigation-headline").inner_text()
    assert headline.startswith("Needs a person to check")
    assert "Recorded check, nothing sent" in card.locator(".mode-badge").inner_text()
    seen = _readable(card)
    assert not any(code in seen for code in CODES), seen
    assert "T11:35:00" not in seen  # no ISO time as words
    _both(page, screenshot, "card")
    card.locator("details.technical summary").click()
    assert "NEEDS_REVIEW" in card.locator(".investigation-status").inner_text()

    # publishing says what changed, with a link to the person
    published = live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident,
            "source": "Tatopani Relief Camp Demo",
            "summary": "Missing since the bridge fell.",
            "original_text": "Her brother came to the desk: Plain Words, 9, missing since noon.",
            "person": {"name": "Plain Words", "age": 9},
            "status": "missing",
            "reported_at": "2026-07-15T14:30:00Z",
        },
        as_user="demo-reviewer",  # a member of the camp publishes for the camp
    )
    page.goto(live_server.url(f"/reports/{published['id']}?published=1"))
    _words_css(page)
    notice = page.locator("#published")
    assert "It started a new record" in notice.inner_text()
    assert "An alert was raised" in notice.inner_text()
    _both(page, screenshot, "published")

    # the person page: the status first, times as people say them, exact on request
    notice.get_by_role("link", name="Plain Words").first.click()
    page.wait_for_url("**/people/*")
    _words_css(page)
    facts = page.locator(".person-page dl.facts dt")
    assert facts.first.inner_text() == "Current status"
    status = page.locator("#current-status")
    assert "missing" in status.inner_text().lower() and "15 Jul" in status.inner_text()
    exact = status.locator(".when-exact").first
    assert not exact.is_visible()
    page.get_by_label("Show exact times").first.check()
    assert exact.is_visible() and "2026-07-15 14:30:00 UTC" in exact.inner_text()
    _both(page, screenshot, "person")
    live_server.reset()


def test_a_reporter_sees_who_can_check_and_close(
    live_server: Any, anonymous_page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    page = anonymous_page
    page.set_viewport_size(SIZES["phone"])
    live_server.sign_in(page, "demo-reporter")
    incident = live_server.incident_id()
    reports = live_server.api("GET", f"/api/incidents/{incident}/reports?limit=500")["items"]
    page.goto(live_server.url(f"/reports/{reports[0]['id']}"))
    _words_css(page)
    assert page.get_by_role("button", name="Investigate").count() == 0
    assert "a reviewer, coordinator or admin" in page.locator("#investigate-who-can").inner_text()
    _both(page, screenshot, "reporter-report")
    page.goto(live_server.url(f"/incidents/{incident}/people"))
    assert page.get_by_role("link", name="Close alert…").count() == 0
    assert "A reviewer, coordinator or admin" in page.locator("#alerts-who-can").text_content()
