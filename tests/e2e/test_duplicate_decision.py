"""A duplicate decision on the person page in a real browser: a look-alike (a Cyrillic
"а" in "Maya Gurung") is offered with its reason, a person decides "different", then
reverses it to "same" from the other person's page; both records stay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def test_duplicate_decided_different_then_reversed(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    look_alike = live_server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "source": "Tatopani Relief Camp Demo",
            "summary": "Registered at the camp.",
            "original_text": "Registration desk entry for a woman of 24.",
            "person": {"name": "M\u0430ya Gurung", "age": 24},
            "status": "safe",
        },
        as_user="demo-reviewer",  # a member of the camp publishes for the camp
    )
    page.goto(live_server.url(f"/incidents/{incident_id}/people?q=maya+gurung"))
    page.locator("ol.people h3 a").filter(has_text="Maya Gurung").first.click()
    page.wait_for_url("**/people/per_*")
    maya_url = page.url
    duplicate = page.locator(f"#duplicate-{look_alike['person_id']}")
    # the reason in words; its code kept for programs, not shown
    assert duplicate.locator('[data-code="confusable_characters"]').count() == 1
    assert "CYRILLIC" in duplicate.inner_text().upper()
    screenshot(page, "duplicate-offered")
    page.set_viewport_size({"width": 390, "height": 844})  # the forms fit a phone too
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    screenshot(page, "phone-person-duplicate")
    page.set_viewport_size({"width": 1280, "height": 900})
    duplicate.locator("form.decide").filter(has_text="Different people").get_by_label(
        "Note (why, and who decided)"
    ).fill("Camp volunteer: another woman, different village")
    duplicate.get_by_role("button", name="Different people").click()
    page.wait_for_url("**?decided=different")
    assert page.locator(f"#duplicate-{look_alike['person_id']}").count() == 0
    decision = page.locator(f"#link-{look_alike['person_id']}")
    # the decision names the signed-in account that made it
    assert "Different people" in decision.inner_text()
    assert "recorded by demo-coordinator" in decision.inner_text()
    screenshot(page, "duplicate-decided-different")
    # shown on the other person too; reversed there
    page.locator(f"#link-{look_alike['person_id']} a").first.click()
    page.wait_for_url(f"**/people/{look_alike['person_id']}")
    other_side = page.locator("section[aria-labelledby=links-heading] li.link")
    assert "another woman, different village" in other_side.inner_text()
    other_side.locator("form.decide").filter(has_text="Reverse: same person").get_by_label(
        "Note (why, and who decided)"
    ).fill("Hospital checked her card: the same woman")
    other_side.get_by_role("button", name="Reverse: same person").click()
    page.wait_for_url("**?decided=same")
    assert page.locator("#same-heading").count() == 1
    page.locator("#link-history summary").click()
    history = page.locator("#link-history li")
    assert history.count() == 2 and "(superseded)" in history.nth(1).inner_text()
    screenshot(page, "duplicate-reversed-same")
    page.goto(maya_url)
    assert "Decided the same person" in page.content()
    live_server.reset()
