"""The Trace pages in a real browser against a real server, signed in with real accounts:
a report's source is the signed-in member's organisation (the form only shows it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

MESSAGE = "Enter a summary and the original report text."
CAMP = "Tatopani Relief Camp Demo"


def _reporter(live_server: Any, name: str, organization: str) -> str:
    """A reporter of ``organization``, made once with ``trace user create``."""
    if name not in live_server.accounts:
        live_server.add_user(name, "reporter", organization)
    return name


def test_publish_through_form_and_find_on_people(
    live_server: Any, anonymous_page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    live_server.sign_in(anonymous_page, _reporter(live_server, "camp-reporter", CAMP))
    page = anonymous_page
    page.goto(live_server.url("/publish"))
    assert CAMP in page.locator("#source").inner_text()  # shown, not a field
    page.get_by_label("Summary").fill("Nima Browser registered at the camp.")
    page.get_by_label("Original report text").fill(
        "Registration desk entry. Nima Browser, 40, arrived <b>this</b> morning."
    )
    page.get_by_label("Person's name").fill("Nima Browser")
    page.get_by_label("Age").fill("40")
    page.get_by_label("Status").select_option("safe")
    page.get_by_label("Location").fill("Tatopani relief camp")
    screenshot(page, "organizations-filled")
    page.get_by_role("button", name="Publish report").click()
    page.wait_for_url("**/reports/*")
    assert page.locator("#published").inner_text().startswith("Report published.")
    assert "<b>this</b>" in page.locator("#original-text").inner_text()
    assert page.locator("#original-text b").count() == 0
    screenshot(page, "report-view")
    page.get_by_role("link", name="← People · Flood Relief Demo").click()
    person = page.locator("li.person", has_text="Nima Browser")
    # People are paged by name; find the page that lists Nima.
    while person.count() == 0 and page.locator("a[rel=next]").count():
        page.locator("a[rel=next]").first.click()
        person = page.locator("li.person", has_text="Nima Browser")
    assert person.count() == 1
    assert CAMP in person.inner_text()
    screenshot(page, "people")


def test_empty_form_shows_message_and_saves_nothing(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    before = live_server.api("GET", f"/api/incidents/{incident_id}/reports")["total"]
    page.goto(live_server.url("/publish"))  # signed in as the police's coordinator
    assert "Nepal Police Demo" in page.locator("#source").inner_text()
    page.get_by_label("Person's name").fill("Kept Name")
    page.get_by_label("Status").select_option("seen")
    page.get_by_role("button", name="Publish report").click()
    alert = page.locator("#form-errors")
    assert alert.inner_text().strip() == MESSAGE
    assert page.get_by_label("Person's name").input_value() == "Kept Name"
    screenshot(page, "organizations-error")
    after = live_server.api("GET", f"/api/incidents/{incident_id}/reports")["total"]
    assert after == before


def test_hospital_example_button_fills_the_form(
    live_server: Any, anonymous_page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    page = anonymous_page
    live_server.sign_in(page, "demo-reporter")  # the hospital's reporter
    page.goto(live_server.url("/publish"))
    page.get_by_role("button", name="Fill with the hospital example").click()
    assert "Central Hospital Demo" in page.locator("#source").inner_text()
    assert page.get_by_label("Person's name").input_value() == "Maya Gurung"
    assert page.get_by_label("Status").input_value() == "admitted"
    screenshot(page, "organizations-hospital-example")
    page.get_by_role("button", name="Publish report").click()
    page.wait_for_url("**/reports/*")
    assert page.locator("dd.source").inner_text() == "Central Hospital Demo"


def test_reset_restores_the_seed(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    seeded = live_server.reset()
    incident_id = seeded["incident_id"]
    live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "source": "Extra Source",
            "summary": "extra",
            "original_text": "extra text",
            "person": {"name": "Extra Person"},
            "status": "missing",
        },
        as_user=_reporter(live_server, "extra-reporter", "Extra Source"),
    )
    page.goto(live_server.url("/"))
    row = page.locator("tbody tr", has_text="Flood Relief Demo")
    assert row.locator("td").nth(1).inner_text() == str(seeded["reports"] + 1)
    page.get_by_role("link", name="Reset demo").click()  # it asks first
    page.get_by_role("button", name="Delete everything and reset the demo").click()
    page.wait_for_url("**/?reset=1")
    assert "The demo was reset" in page.get_by_role("status").inner_text()
    row = page.locator("tbody tr", has_text="Flood Relief Demo")
    cells = [row.locator("td").nth(i).inner_text() for i in (1, 2, 3)]
    assert cells == [str(seeded["reports"]), str(seeded["people"]), str(seeded["open_alerts"])]
    screenshot(page, "incidents-after-reset")
    page.get_by_role("link", name="Flood Relief Demo").click()
    assert page.locator("li.person", has_text="Extra Person").count() == 0
    assert page.get_by_role("heading", name="Open alerts").is_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Reports").click()
    screenshot(page, "reports")


def test_real_crisis_text_published_through_the_form_shows_as_text(
    live_server: Any, anonymous_page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    import csv
    import os

    import pytest

    base = Path(
        os.environ.get("REAL_DATA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data")
    )
    folder = base / "crisis" / "crisislex_t26"
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        pytest.skip(f"real crisis texts not found under {folder} (set REAL_DATA_DIR)")
    texts: list[str] = []
    for path in files:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))[1:]
        texts += [r[1] for r in rows if len(r) > 1 and any(c in r[1] for c in "&<>\"'")]
    assert texts, "expected real texts with characters that need escaping"
    text = texts[0]
    live_server.reset()
    page = anonymous_page
    live_server.sign_in(page, _reporter(live_server, "relay-reporter", "Public post relay"))
    page.goto(live_server.url("/publish"))
    assert "Public post relay" in page.locator("#source").inner_text()
    page.get_by_label("Summary").fill(text[:60])
    page.get_by_label("Original report text").fill(text)
    page.get_by_label("Person's name").fill("Unnamed person")
    page.get_by_label("Status").select_option("seen")
    page.get_by_role("button", name="Publish report").click()
    page.wait_for_url("**/reports/*")
    assert page.locator("#original-text").inner_text() == text
    screenshot(page, "report-view-real-crisis-text")
