"""Closing an alert on the People page in a real browser: a later safe report closes one
by rule, and a person closes another with a note."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_alert_closes_by_rule_and_by_a_person(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    alerts = page.locator("#open-alerts > ul > li")  # folded under the search on a phone
    assert alerts.filter(has_text="Asha Lama").count() == 0  # closed by a later safe report
    kamala = alerts.filter(has_text="Kamala Tamang")
    assert kamala.count() == 1
    before = alerts.count()
    kamala.get_by_label("Why close this alert?").fill("Family phoned: she is at home")
    screenshot(page, "alert-closing")
    kamala.get_by_role("button", name="Close alert").click()
    page.wait_for_url("**/people?closed=1")
    assert "Alert closed" in page.locator("#alert-closed").inner_text()
    assert alerts.count() == before - 1
    assert alerts.filter(has_text="Kamala Tamang").count() == 0
    page.locator("details.closed-alerts summary").click()
    closed = page.locator("details.closed-alerts li")
    assert "Family phoned: she is at home" in closed.filter(has_text="Kamala Tamang").inner_text()
    assert "by a later claim" in closed.filter(has_text="Asha Lama").inner_text()
    screenshot(page, "alert-closed")
    live_server.reset()
