"""Closing an alert on the People page in a real browser: a later safe report closes one
by rule; a person closes another through its confirmation page, saying she was found
safe, which publishes that report; one person's two missing reports are one alert."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_alert_closes_by_rule_and_by_a_person(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    people_url = live_server.url(f"/incidents/{incident_id}/people")
    page.goto(people_url)
    alerts = page.locator("#open-alerts > ul > li")  # folded under the search on a phone
    assert alerts.filter(has_text="Asha Lama").count() == 0  # closed by a later safe report
    maya = alerts.filter(has_text="Maya Gurung")
    assert maya.count() == 1  # the police report and its relay: one alert, two sources
    assert "Nepal Police Demo and " in maya.inner_text()
    kamala = alerts.filter(has_text="Kamala Tamang")
    assert kamala.count() == 1
    before = alerts.count()
    kamala.get_by_role("link", name="Close alert…").click()
    page.wait_for_url("**/alerts/*/close")
    page.get_by_label("found safe").check()
    page.get_by_label("How do you know?").fill("Family phoned: she is at home")
    page.get_by_label("I confirm: close this alert.").check()
    screenshot(page, "alert-closing")
    page.get_by_role("button", name="Close the alert").click()
    page.wait_for_url("**?alert=closed*")
    assert "Alert closed" in page.locator("#alert-done").inner_text()
    assert "safe" in page.locator("#current-status").inner_text().lower()
    page.goto(people_url)
    assert alerts.count() == before - 1
    assert alerts.filter(has_text="Kamala Tamang").count() == 0
    page.locator("details.closed-alerts summary").click()
    closed = page.locator("details.closed-alerts li")
    assert "by a later report" in closed.filter(has_text="Kamala Tamang").inner_text()
    assert "by a later report" in closed.filter(has_text="Asha Lama").inner_text()
    screenshot(page, "alert-closed")
    live_server.reset()
