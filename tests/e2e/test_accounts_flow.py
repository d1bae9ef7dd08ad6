"""Accounts in a real browser, with the demo accounts the server printed for this run:
the reporter signs in through the login page, publishes for her organisation and is
refused a review decision; a reviewer signs in and decides; an admin reads the Audit page,
which names each of them beside what they did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

REPORTER = "demo-reporter"  # Central Hospital Demo
REVIEWER = "demo-reviewer"
ADMIN = "demo-admin"
HOSPITAL = "Central Hospital Demo"


def _audit_rows(page: Any, who: str, action: str) -> Any:
    return page.locator("table.audit tbody tr").filter(has_text=who).filter(has_text=action)


def test_reporter_publishes_is_refused_a_review_reviewer_decides_admin_reads_the_audit(
    live_server: Any, anonymous_page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    page = anonymous_page

    # Not signed in: the reviews page sends the browser to the login page, and back after.
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    page.wait_for_url("**/login?next=*")
    assert page.locator("#demo-accounts").is_visible()  # names only, never passwords
    assert live_server.accounts[REPORTER] not in page.content()
    page.get_by_label("Name").fill(REPORTER)
    page.get_by_label("Password").fill(live_server.accounts[REPORTER])
    screenshot(page, "accounts-login")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"**/incidents/{incident_id}/reviews")
    assert REPORTER in page.locator("form.signed-in").inner_text()

    # The reporter publishes: the source is her organisation, shown, not typed.
    page.goto(live_server.url(f"/publish?incident_id={incident_id}"))
    assert HOSPITAL in page.locator("#source").inner_text()
    page.get_by_label("Summary").fill("Accounts Flow admitted to the ward.")
    page.get_by_label("Original report text").fill(
        "Ward register: Accounts Flow, 52, admitted this morning with a leg injury."
    )
    page.get_by_label("Person's name").fill("Accounts Flow")
    page.get_by_label("Age").fill("52")
    page.get_by_label("Status").select_option("admitted")
    screenshot(page, "accounts-reporter-publishing")
    page.get_by_role("button", name="Publish report").click()
    page.wait_for_url("**/reports/rep_*")
    assert page.locator("#published").inner_text().startswith("Report published.")
    assert page.locator("dd.source").inner_text() == HOSPITAL
    published_id = page.url.rsplit("/", 1)[-1].split("?", 1)[0]
    screenshot(page, "accounts-reporter-published")

    # The reporter may read the Reviews queue but not decide: no decision form, one line
    # saying who can (issue 40); a decision posted anyway (a stale page, a hand-made
    # request) is refused in those words, and nothing is recorded.
    queue = live_server.api("GET", f"/api/incidents/{incident_id}/reviews")
    assert queue["total"] == 3  # the demo's recorded runs
    report_id = queue["items"][0]["report_id"]
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    assert "record decisions" in page.locator("#review-who-can").inner_text()
    assert page.locator(f"#review-{report_id}").get_by_label("First-hand confirmed").count() == 0
    screenshot(page, "accounts-reporter-reads-reviews")
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
    refused = page.request.post(
        live_server.url(f"/reports/{report_id}/review"),
        form={"csrf_token": token or "", "decision": "first_hand", "note": "a reporter"},
    )
    assert refused.status == 403
    assert "A reviewer, coordinator or admin of this incident can." in refused.text()
    assert live_server.api("GET", f"/api/incidents/{incident_id}/reviews")["total"] == 3

    # Signing out ends the session: the pages ask for a sign-in again.
    page.goto(live_server.url("/"))
    live_server.sign_out(page)
    assert "You are signed out" in page.get_by_role("status").inner_text()
    screenshot(page, "accounts-signed-out")
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    page.wait_for_url("**/login?next=*")

    # A reviewer signs in and records the decision the reporter could not.
    live_server.sign_in(page, REVIEWER)
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    item = page.locator(f"#review-{report_id}")
    item.locator("summary").first.click()  # a compact card: unfold it to decide
    item.get_by_label("First-hand confirmed").check()
    item.get_by_label("How did you decide?").fill("Phoned the ward, who met the family")
    screenshot(page, "accounts-reviewer-deciding")
    item.get_by_role("button", name="Record decision").click()
    page.wait_for_url("**/reviews?decided=*")
    assert "It has left the queue" in page.locator("#review-recorded").inner_text()
    assert page.locator(f"#review-{report_id}").count() == 0
    screenshot(page, "accounts-reviewer-decided")
    review = live_server.api("GET", f"/api/reports/{report_id}/investigation")["review"]
    assert (review["decision"], review["decided_by"]) == ("first_hand", REVIEWER)
    live_server.sign_out(page)

    # An admin reads the audit trail: each action under the name of whoever did it.
    live_server.sign_in(page, ADMIN)
    page.get_by_role("link", name="Audit", exact=True).click()
    page.wait_for_url("**/audit")
    # (the trail outlives a demo reset: other tests' rows may be there too)
    assert _audit_rows(page, REPORTER, "report.publish").filter(has_text=published_id).count() == 1
    decided = _audit_rows(page, REVIEWER, "review.decide").filter(has_text=report_id)
    assert decided.count() == 1
    assert "first_hand" in decided.inner_text()
    assert _audit_rows(page, REPORTER, "review.decide").count() == 0  # refused: no change
    for name in (REPORTER, REVIEWER, ADMIN):
        assert _audit_rows(page, name, "login").count() >= 1
    screenshot(page, "accounts-audit")

    # Filtered by who: only the reviewer's rows.
    page.get_by_label("Who").fill(REVIEWER)
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"**/audit?actor={REVIEWER}*")
    rows = page.locator("table.audit tbody tr")
    assert rows.count() >= 2  # signing in, the decision, signing out
    assert all(REVIEWER in row.locator("td").nth(1).inner_text() for row in rows.all())
    screenshot(page, "accounts-audit-by-reviewer")
    live_server.reset()
