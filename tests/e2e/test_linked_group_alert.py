"""Two spellings of one woman in a real browser, at 1280 px and at 390 px: a missing
report under her Devanagari name (open alert) and a safe registration under her Latin
spelling. Deciding "same person" closes the alert and the status says safe; withdrawing
the decision reopens exactly that alert. Then the alert is closed by hand through its
confirmation page. Names and texts are this test's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

DEVANAGARI = "सरिता तामाङ"
LATIN = "Sarita Tamang"


def _fits(page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width


def _shots(page: Any, screenshot: Callable[[Any, str], Path], name: str) -> None:
    for width in (1280, 390):
        _fits(page, width)
        screenshot(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1280, "height": 900})


def test_link_closes_the_alert_and_the_undo_reopens_it(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    missing = live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "summary": "Not seen since the landslide.",
            "original_text": "Her brother came to the police post: she has not come home.",
            "person": {"name": DEVANAGARI, "age": 31},
            "status": "missing",
        },
        as_user="demo-coordinator",  # publishes for the police
    )
    safe = live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "summary": "Registered at the camp.",
            "original_text": "Camp registration: a woman of 31, unhurt.",
            "person": {"name": LATIN, "age": 31},
            "status": "safe",
        },
        as_user="demo-reviewer",  # publishes for the camp
    )
    alerts = live_server.api("GET", f"/api/incidents/{incident_id}/alerts?limit=100")
    alert_id = next(a["id"] for a in alerts["items"] if a["person_id"] == missing["person_id"])
    page.goto(live_server.url(f"/people/{missing['person_id']}"))
    alert = page.locator(f"#alert-{alert_id}")
    assert "open" in alert.inner_text().lower()
    assert "missing" in page.locator("#current-status").inner_text().lower()
    _shots(page, screenshot, "group-before-link")

    # decide "same person" from the possible duplicates panel
    other = page.locator(f"#duplicate-{safe['person_id']}")
    form = other.locator("form.decide").filter(has_text="Same person")
    form.get_by_label("Note (why, and who decided)").fill("Same woman: camp card and age match")
    form.get_by_role("button", name="Same person").click()
    page.wait_for_url("**?decided=same")
    assert "closed" in page.locator(f"#alert-{alert_id}").inner_text().lower()
    assert "safe" in page.locator("#current-status").inner_text().lower()
    assert LATIN in page.locator("#group-names").inner_text()
    _shots(page, screenshot, "group-linked-alert-closed")
    # the people list shows the two records as one row
    people = live_server.api(
        "GET", f"/api/incidents/{incident_id}/people?q=sarita+tamang&limit=100"
    )
    assert [p["id"] for p in people["items"]] == [min(missing["person_id"], safe["person_id"])]
    [row] = people["items"]
    assert len(row["claims"]) == 2 and {row["name"], *row["other_names"]} == {DEVANAGARI, LATIN}

    # undo: withdraw the decision; the same alert is open again
    link = page.locator(f"#link-{safe['person_id']}")
    withdraw = link.locator("form.decide").filter(has_text="Withdraw the decision")
    withdraw.get_by_label("Note (why, and who decided)").fill("Camp card was for her cousin")
    withdraw.get_by_role("button", name="Withdraw the decision").click()
    page.wait_for_url("**?decided=undecided")
    assert "open" in page.locator(f"#alert-{alert_id}").inner_text().lower()
    assert "missing" in page.locator("#current-status").inner_text().lower()
    _shots(page, screenshot, "group-undone-alert-reopened")

    # closing by hand goes through a confirmation page and says what is known
    page.locator(f"#close-{alert_id}").click()
    page.wait_for_url(f"**/alerts/{alert_id}/close")
    _shots(page, screenshot, "alert-close-confirm")
    page.locator("#reason-found_safe").check()
    page.locator("#close-note").fill("She phoned the police post herself.")
    page.locator("#close-alert-button").click()  # the box is not ticked: nothing happens
    assert page.url.endswith(f"/alerts/{alert_id}/close")
    page.locator("#close-confirm").check()
    page.locator("#close-alert-button").click()
    page.wait_for_url("**?alert=closed*")
    assert "closed" in page.locator(f"#alert-{alert_id}").inner_text().lower()
    assert "safe" in page.locator("#current-status").inner_text().lower()
    _shots(page, screenshot, "alert-closed-by-hand")
    live_server.reset()
