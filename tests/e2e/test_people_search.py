"""Searching the People page in a real browser: a Latin, misspelt query finds a person
registered in Devanagari, and a filter narrows the list."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_search_finds_a_devanagari_name_from_a_typo(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "source": "Tatopani Relief Camp Demo",
            "summary": "Registered at the camp.",
            "original_text": "Registration desk entry for a woman from Listi.",
            "person": {"name": "सुनिता राई", "age": 31},
            "status": "safe",
        },
        as_user="demo-reviewer",  # a member of the camp publishes for the camp
    )
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    page.get_by_label("Name").fill("Sunitta")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/people?q=Sunitta*")
    people = page.locator("li.person")
    assert people.first.locator("h3").inner_text().startswith("सुनिता राई")
    assert "match" in page.locator("#search-result").inner_text()
    screenshot(page, "people-search")
    page.get_by_label("Name").fill("")
    page.get_by_label("Latest status").select_option("deceased")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/people?*status=deceased*")
    assert [h.inner_text() for h in page.locator("li.person h3").all()] == ["Deepak Rai (41)"]
    live_server.reset()
