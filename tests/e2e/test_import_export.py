"""In a real browser, at 390 px and at 1280 px: a coordinator imports a shelter list with
a dry run first (the preview's counts, its problem by line and its look-alike), confirms
without uploading again, then exports the people as CSV and finds them there."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_support import PAGE_ACCOUNT

# written for this test: line 3 has no name; Maya Gurung (24) is one of the demo's people
ROWS = (
    "full_name,age,status,last_known_location\n"
    "Karma Yangzom,{age},safe,Ridge Camp\n"
    ",6,safe,Ridge Camp\n"
    "Maya Gurung,24,safe,Ridge Camp\n"
)


def _open_menu(page: Any) -> None:
    """On a phone the menu is folded behind "Menu"."""
    toggle = page.locator("details.menu > summary")
    if toggle.is_visible():
        toggle.click()


@pytest.mark.parametrize("width", [390, 1280])
def test_import_a_shelter_list_with_a_dry_run_then_export(
    browser: Any, live_server: Any, screenshot: Callable[[Any, str], Path], width: int
) -> None:
    live_server.reset()
    context = browser.new_context(
        viewport={"width": width, "height": 900}, accept_downloads=True, is_mobile=width < 500
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    live_server.sign_in(page, PAGE_ACCOUNT)
    people_before = live_server.api(
        "GET", f"/api/incidents/{live_server.incident_id()}/people?limit=500"
    )["total"]
    try:
        _open_menu(page)
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Import").click()
        page.wait_for_url("**/import*")
        page.get_by_label("Incident").select_option(label="Flood Relief Demo")
        page.get_by_label("Shelter list (CSV)").check()
        page.get_by_label("Source of a shelter list").fill(f"Ridge Camp Desk {width}")
        page.get_by_label("File").set_input_files(
            {
                "name": "ridge-camp.csv",
                "mimeType": "text/csv",
                "buffer": ROWS.format(age=30 + width % 7).encode(),
            }
        )
        screenshot(page, f"import-form-{width}")
        page.get_by_role("button", name="Upload and preview").click()
        page.wait_for_selector("#import-preview")
        assert page.locator("#count-people-added").inner_text() == "1"
        assert page.locator("#count-people-matched").inner_text() == "1"
        assert page.locator("#count-notes-added").inner_text() == "2"
        assert page.locator("#count-invalid").inner_text() == "1"
        assert "Line 3:" in page.locator("#import-problems").inner_text()
        assert "Maya Gurung" in page.locator("#import-flagged").inner_text()
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        after_preview = live_server.api(
            "GET", f"/api/incidents/{live_server.incident_id()}/people?limit=500"
        )["total"]
        assert after_preview == people_before  # the dry run kept nothing
        screenshot(page, f"import-preview-{width}")

        page.get_by_role("button", name="Import the valid rows").click()
        page.wait_for_selector("#import-done")
        assert "1 person added" in page.locator("#import-done").inner_text()
        screenshot(page, f"import-done-{width}")

        _open_menu(page)
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Export").click()
        page.wait_for_url("**/export*")
        page.get_by_label("People with their current status (CSV, for a spreadsheet)").check()
        assert page.evaluate("document.scrollingElement.scrollWidth") <= width
        screenshot(page, f"export-form-{width}")
        with page.expect_download() as waiting:
            page.get_by_role("button", name="Download").click()
        download = waiting.value
        assert download.suggested_filename.endswith(".people.csv")
        text = Path(download.path()).read_text(encoding="utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text)))
        karma = next(row for row in rows if row["full_name"] == "Karma Yangzom")
        assert karma["status_source"] == f"Ridge Camp Desk {width}"
        assert karma["status_location"] == "Ridge Camp" and karma["status"] == "safe"
        assert any(r["full_name"] == "Maya Gurung" and r["status"] == "safe" for r in rows)
        assert len(rows) == people_before + 1
    finally:
        context.close()
        live_server.reset()
