"""Issue 23 in a real browser, at 390 px and 1280 px: "Publish a report" from a person's
page; working the Duplicates queue (decide a pair); the People page's search first on a
phone with its alerts folded below; Reset demo asks first; the people list printed as a
roster (print media emulated). Times are shown in the incident's zone (Nepal, +05:45)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
SIZES = {"phone": PHONE, "desktop": DESKTOP}


def _fits(page: Any, width: int) -> None:
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width


def _in_nepal(live_server: Any) -> str:
    live_server.reset()
    incident_id: str = live_server.incident_id()
    zone = {"time_zone": "Asia/Kathmandu"}
    live_server.api("PUT", f"/api/incidents/{incident_id}/time-zone", zone)
    return incident_id


@pytest.mark.parametrize("size", SIZES)
def test_publish_a_report_from_a_person_page(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path], size: str
) -> None:
    incident_id = _in_nepal(live_server)
    page.set_viewport_size(SIZES[size])
    people = live_server.api("GET", f"/api/incidents/{incident_id}/people")["items"]
    person = people[0]
    page.goto(live_server.url(f"/people/{person['id']}"))
    assert "(Kathmandu)" in page.locator("#current-status").inner_text()  # as people say it
    assert "+05:45 · " in (page.locator("#current-status time").first.get_attribute("title") or "")
    page.get_by_role("link", name="Publish a report about this person").click()
    page.wait_for_url("**/publish?*")
    assert page.get_by_role("heading", level=1).inner_text().startswith("Publish a report")
    assert person["name"] in page.locator("#chosen-person").inner_text()
    assert page.locator("#person_id").count() == 0  # nothing to type
    assert page.get_by_label("Status").input_value() == ""  # no default
    assert "Asia/Kathmandu" in page.locator("label[for=reported_at]").inner_text()
    page.get_by_label("Summary").fill("Found at the school shelter.")
    page.get_by_label("Original report text").fill("Our volunteer met her at the school.")
    page.get_by_label("Reported time").fill("2026-07-15T14:30")
    _fits(page, SIZES[size]["width"])
    page.get_by_role("button", name="Publish report").click()
    # the browser sends no status: the server asks for one, the person is kept
    page.wait_for_selector("#form-errors")
    assert "Choose what the report says" in page.locator("#form-errors").inner_text()
    assert person["name"] in page.locator("#chosen-person").inner_text()
    screenshot(page, f"publish-from-person-{size}")
    page.get_by_label("Status").select_option("safe")
    page.get_by_role("button", name="Publish report").click()
    page.wait_for_url("**/reports/*")
    reported = page.locator(".facts time").first
    assert reported.inner_text().startswith("15 Jul 2026, 14:30 (Kathmandu)") or (
        reported.inner_text().startswith("15 Jul, 14:30 (Kathmandu)")
    )
    exact = "2026-07-15 14:30:00 +05:45 · 2026-07-15 08:45:00 UTC"
    assert reported.get_attribute("title") == exact  # and on request: "Show exact times"
    detail = live_server.api("GET", f"/api/people/{person['id']}")
    assert detail["status"]["status"] == "safe"
    live_server.reset()


@pytest.mark.parametrize("size", SIZES)
def test_work_the_duplicates_queue(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path], size: str
) -> None:
    incident_id = _in_nepal(live_server)
    for name, status, location in (
        ("Bishnu Shrestha", "missing", ""),
        ("Bishnu Shresta", "safe", "Chautara camp"),
    ):
        live_server.api(
            "POST",
            "/api/reports",
            {
                "incident_id": incident_id,
                "source": "Tatopani Relief Camp Demo",
                "summary": f"{name}: {status}.",
                "original_text": f"Desk entry: {name}, 29, {status}.",
                "person": {"name": name, "age": 29},
                "status": status,
                "location": location,
            },
            as_user="demo-reviewer",
        )
    page.set_viewport_size(SIZES[size])
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    page.locator("#duplicates-link").click()
    page.wait_for_url(f"**/incidents/{incident_id}/duplicates")
    before = live_server.api("GET", f"/api/incidents/{incident_id}/duplicates")["total"]
    pair = page.locator("li.duplicate-pair", has_text="Bishnu Shresta")
    sides = pair.locator(".side")
    assert sides.count() == 2
    text = pair.inner_text()
    for fact in ("Age", "Status", "Place", "Source", "Alert", "Chautara camp", "(Kathmandu)"):
        assert fact in text, fact
    _fits(page, SIZES[size]["width"])
    screenshot(page, f"duplicates-queue-{size}")
    pair.get_by_label("Note (why, and who decided)").fill("Same father's name at the camp desk")
    pair.get_by_role("button", name="Same person").click()
    page.wait_for_url("**/duplicates?page=1&decided=same&person=*")
    decided = page.locator("#pair-decided")
    assert "left the queue" in decided.inner_text()
    # it names the person (a link) and the alert the decision closed (issue 40)
    assert decided.locator("a[href^='/people/']").count() >= 1
    assert decided.locator("li.alert-closed-by-decision").count() == 1
    assert page.locator("li.duplicate-pair", has_text="Bishnu Shresta").count() == 0
    after = live_server.api("GET", f"/api/incidents/{incident_id}/duplicates")["total"]
    assert after == before - 1
    screenshot(page, f"duplicates-queue-decided-{size}")
    live_server.reset()


def test_people_page_puts_search_first_on_a_phone(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    page.set_viewport_size(PHONE)
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    search = page.get_by_role("search", name="Find a person")
    alerts = page.locator("#open-alerts")
    search_box = search.bounding_box()
    assert search_box is not None and search_box["y"] < PHONE["height"]  # on the first screen
    assert search_box["y"] < (alerts.bounding_box() or {"y": 0})["y"]
    assert alerts.get_attribute("open") is None
    assert not page.locator("#open-alerts li").first.is_visible()  # folded on a phone
    _fits(page, PHONE["width"])
    screenshot(page, "people-search-first-phone")
    page.get_by_label("Name").fill("maya gurung")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**q=maya+gurung*")
    page.locator("#open-alerts summary").click()
    shown = page.locator("#open-alerts li[id^=alert-]")
    assert shown.count() >= 1
    for text in shown.all_inner_texts():
        assert "Maya Gurung" in text
    screenshot(page, "people-search-alerts-phone")
    page.set_viewport_size(DESKTOP)
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    assert page.locator("#open-alerts li").first.is_visible()  # shown at once on a desktop
    screenshot(page, "people-search-first-desktop")


def test_the_people_list_prints_as_a_roster(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    page.emulate_media(media="print")
    for hidden in ("header.top", "form.signed-in", "form.search", "section.alerts", "footer"):
        assert not page.locator(hidden).first.is_visible(), hidden
    people = page.locator("li.person")
    assert people.count() >= 3 and people.first.is_visible()
    first = people.first.inner_text()
    assert any(word in first for word in ("MISSING", "SAFE", "SEEN", "ADMITTED", "DECEASED"))
    assert "UTC" in first  # the time of each claim
    screenshot(page, "people-roster-print")
    page.emulate_media(media="screen")
    assert page.locator("header.top").is_visible()


def test_reset_demo_asks_first(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    page.goto(live_server.url("/"))
    page.get_by_role("link", name="Reset demo").click()
    page.wait_for_url("**/demo/reset")
    assert "cannot be undone" in page.locator("#reset-warning").inner_text()
    screenshot(page, "reset-demo-confirm")
    page.get_by_role("link", name="Cancel").click()
    page.wait_for_url(live_server.url("/"))
    page.get_by_role("link", name="Reset demo").click()
    page.get_by_role("button", name="Delete everything and reset the demo").click()
    page.wait_for_url("**/?reset=1")
    assert "The demo was reset" in page.get_by_role("status").inner_text()
