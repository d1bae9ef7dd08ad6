"""In a real browser: a person decides a NEEDS_REVIEW result on the Reviews page, and
every page fits a 390-px phone with the whole header reachable.

The seeded demo's REPLAYED runs are re-decided with today's rules when shown; the three
are NEEDS_REVIEW, so the queue is not empty after a reset (no model needed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import PAGE_ACCOUNT

PHONE = {"width": 390, "height": 844}


def test_a_person_decides_on_the_reviews_page(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    queue = live_server.api("GET", f"/api/incidents/{incident_id}/reviews")
    assert queue["total"] == 3
    first = queue["items"][0]
    run_before = live_server.api("GET", f"/api/reports/{first['report_id']}/investigation")

    page.goto(live_server.url("/"))
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Reviews").click()
    page.wait_for_url(f"**/incidents/{incident_id}/reviews")
    items = page.locator("li.review-item")
    assert items.count() == 3
    item = page.locator(f"#review-{first['report_id']}")
    card = item.locator("article.investigation-card")
    assert card.get_attribute("data-status") == "NEEDS_REVIEW"
    assert item.locator("mark.cue").count() == len(first["evidence"])
    item.locator("summary").first.click()  # a compact card: unfold it to decide
    item.get_by_label("First-hand confirmed").check()
    item.get_by_label("How did you decide?").fill("Phoned the duty officer, who met the family")
    screenshot(page, "review-deciding")
    item.get_by_role("button", name="Record decision").click()
    page.wait_for_url("**/reviews?decided=*")
    assert "It has left the queue" in page.locator("#review-recorded").inner_text()
    assert items.count() == 2
    assert page.locator(f"#review-{first['report_id']}").count() == 0

    page.locator("#review-recorded a").click()
    decision = page.locator("#investigation-card #review-decision")
    decision.wait_for()
    assert decision.get_attribute("data-decision") == "first_hand"
    assert "Phoned the duty officer" in decision.inner_text()
    assert "A reviewer confirmed the report is a first-hand account" in decision.inner_text()
    headline = page.locator("#investigation-card .investigation-headline").inner_text()
    assert headline == "Decided: First-hand confirmed"  # a decided result looks decided
    assert page.locator("#investigation-card").get_attribute("data-decided") == "true"
    screenshot(page, "review-decided-on-card")

    after = live_server.api("GET", f"/api/reports/{first['report_id']}/investigation")
    assert after["review"]["decision"] == "first_hand"
    assert (run_before["headline"], after["headline"]) == (
        "Needs review",
        "Reviewed: first-hand confirmed",
    )
    assert after["summary"] == "Decided: First-hand confirmed"  # in words (issue 40)
    shown = ("review", "headline", "summary")  # the decision shows; the saved run is unchanged
    assert {k: v for k, v in after.items() if k not in shown} == {
        k: v for k, v in run_before.items() if k not in shown
    }
    live_server.reset()


def _pages(server: Any) -> dict[str, str]:
    incident_id = server.incident_id()
    reports = server.api("GET", f"/api/incidents/{incident_id}/reports?limit=500")["items"]
    with_card = next(r["id"] for r in reports if r["original_text"].startswith("Duty officer"))
    longest = max(reports, key=lambda r: len(r["original_text"]))["id"]
    maya = next(r["person_id"] for r in reports if r["person"]["name"] == "Maya Gurung")
    return {
        "home": "/",
        "people": f"/incidents/{incident_id}/people",
        "reports": f"/incidents/{incident_id}/reports",
        "report": f"/reports/{with_card}",
        "report-longest": f"/reports/{longest}",
        "person": f"/people/{maya}",
        "organizations": f"/publish?incident_id={incident_id}",
        "reviews": f"/incidents/{incident_id}/reviews",
        "not-found": "/reports/rep_does_not_exist",
    }


@pytest.fixture
def phone(browser: Any, live_server: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    live_server.sign_in(page, PAGE_ACCOUNT)
    yield page
    context.close()


@pytest.mark.parametrize(
    "name",
    [
        "home",
        "people",
        "reports",
        "report",
        "report-longest",
        "person",
        "organizations",
        "reviews",
        "not-found",
    ],
)
def test_every_page_fits_a_390px_phone(
    live_server: Any, phone: Any, screenshot: Callable[[Any, str], Path], name: str
) -> None:
    path = _pages(live_server)[name]
    phone.goto(live_server.url(path))
    if name == "report":
        phone.locator("#investigation-card details.technical summary").click()
    width = phone.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{name}: {width}px wide"
    menu = phone.locator("details.menu > summary")
    box = menu.bounding_box()
    assert box is not None and box["height"] >= 44 and box["x"] + box["width"] <= PHONE["width"]
    menu.click()  # the menu is folded on a phone
    links = phone.locator("header.top a, header.top button")
    # signed in as a coordinator, the same on every page: the brand, Incidents, Publish a
    # report, People, Reports, Reviews, Follow-ups, Webhooks (issue 41), Import, Export,
    # Reset demo, the account and Sign out, and the four languages (issue 42)
    assert links.count() == 17
    for link in links.all():
        box = link.bounding_box()
        label = link.inner_text()
        assert link.is_visible() and box is not None, label
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (label, box)
        link.click(trial=True)  # visible, enabled, not covered by anything else
    signed_in = phone.locator("form.signed-in")  # "Signed in as ... · Sign out" fits too
    assert PAGE_ACCOUNT in signed_in.inner_text()
    for control in (signed_in.locator("a"), signed_in.get_by_role("button", name="Sign out")):
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    screenshot(phone, f"phone-{name}")
