"""In a real browser at 390 px: the Reviews page is a list of compact cards that unfold,
in priority order, with filters and "assign to me" (issue 40, build item 5).

The seeded demo's queue holds three NEEDS_REVIEW results after a reset (no model needed):
two about Maya Gurung, whose alert is open, first; then Sunita Bhandari's camp entry. The
page's height at 390 px is printed (``pytest -s``; 4,442 px before the cards folded) and
screenshots are saved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

PHONE = {"width": 390, "height": 844}


def _height(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))


def test_the_queue_is_compact_on_a_phone_and_can_be_taken(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    queue = live_server.api("GET", f"/api/incidents/{incident_id}/reviews")
    assert [i["priority_words"] for i in queue["items"]] == ["Open alert", "Open alert", ""]
    first = queue["items"][0]["report_id"]

    page.set_viewport_size(PHONE)
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    height = _height(page)
    print(f"\nReviews page at 390 px, 3 items folded: {height} px")
    assert height < 1500, height
    screenshot(page, "review-queue-phone")
    item = page.locator(f"#review-{first}")
    assert item.locator("details.review-fold").get_attribute("open") is None
    assert item.locator(".review-priority").inner_text() == "Open alert"
    assert not item.get_by_role("button", name="Record decision").is_visible()

    # unfolded: the result card and the decision form
    item.locator("details.review-fold > summary").click()
    assert item.get_by_role("button", name="Record decision").is_visible()
    assert item.locator("article.investigation-card").is_visible()
    screenshot(page, "review-queue-phone-unfolded")

    item.get_by_role("button", name="Assign to me").click()
    page.wait_for_url(f"**/reviews?page=1#review-{first}")
    assert "taken by you" in page.locator(f"#review-{first} .review-facts").inner_text()
    page.locator("#review-filters summary").click()
    page.get_by_label("Only reviews assigned to me").check()
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**/reviews?*mine=1*")
    assert page.locator("li.review-item").count() == 1
    assert "(1 on)" in page.locator("#review-filters summary").inner_text()
    screenshot(page, "review-queue-phone-mine")
    page.locator(f"#review-{first}").get_by_role("button", name="Release").click()
    page.wait_for_url("**/reviews?mine=1*")
    assert page.locator("#queue-empty").is_visible()  # released: nothing changed is left
