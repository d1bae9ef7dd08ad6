"""Two of issue 40's tasks in a real browser, at 390 and 1280 px, counted in taps and
screens of scrolling (the helpers of test_setup_and_axe.py):

- a reviewer searches the People page for "Sunitta" (the demo has Sunita Bhandari), opens
  her report, asks for an investigation (this server has no live model: it says so, in
  words, and shows the run recorded for her report), decides on that result on the report
  page, and sees on the Reviews page that it has left the queue;
- a coordinator links two records of one person from the Duplicates page, and the page
  names the person and the alert the decision closed.

Every screen is checked for internal codes outside folded details and run through axe
(0 serious or critical). ``pytest -s`` prints the figures; they are also added to
``test-artifacts/tasks-<width>.json``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_setup_and_axe import BLOCKING, WIDTHS, Tally, _axe, _menu, _record

# Words a person must not read outside a folded <details> (innerText skips folded parts).
CODES = (
    "NEEDS_REVIEW",
    "REPLAYED",
    "CACHED",
    "UNAVAILABLE",
    "FIRST_HAND",
    "alerts:write",
    "reviews:write",
    "IANA",
)
RAW_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
RECORD_ID = re.compile(r"\b(?:per|rep|clm|alr|inc)_[0-9a-f]{8,}")


@pytest.fixture(params=list(WIDTHS))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    viewport = WIDTHS[request.param]
    context = browser.new_context(
        viewport=viewport, device_scale_factor=1, is_mobile=request.param == "phone"
    )
    context.set_default_timeout(15_000)
    yield request.param, context.new_page()
    context.close()


def _check(page: Any, name: str, axe_found: dict[str, int]) -> str:
    """The words shown on the page (codes only inside folded details), and axe: nothing
    serious or critical. Returns the page's visible text."""
    text: str = page.locator("body").inner_text()
    shown = [code for code in CODES if code in text]
    assert shown == [], f"{name}: {shown} outside folded details"
    assert not RAW_TIME.search(text), f"{name}: {RAW_TIME.search(text)}"
    assert not RECORD_ID.search(text), f"{name}: {RECORD_ID.search(text)}"
    found = _axe(page)
    axe_found[name] = len(found)
    blocking = [v["id"] for v in found if v["impact"] in BLOCKING]
    assert blocking == [], f"{name}: {blocking}"
    return text


def _report(width: str, task: str, tally: Tally, page: Any, axe_found: dict[str, int]) -> None:
    height = page.viewport_size["height"]
    page_screens = page.evaluate("document.scrollingElement.scrollHeight") / height
    _record(width, task, tally)
    print(
        f"\n[{width} {page.viewport_size['width']}px] {task}: {tally.taps} taps,"
        f" {tally.screens:.2f} screens scrolled (last page {page_screens:.1f} screens tall);"
        f" axe violations per page {axe_found} (0 serious/critical)"
    )


def test_a_reviewer_finds_sunitta_investigates_and_decides(
    live_server: Any, sized: tuple[str, Any], screenshot: Callable[[Any, str], Path]
) -> None:
    width, page = sized
    incident_id = live_server.incident_id()
    queue = live_server.api("GET", f"/api/incidents/{incident_id}/reviews")
    if queue["total"] < 3:  # a test before decided one: start from the seeded demo
        live_server.reset()
        queue = live_server.api("GET", f"/api/incidents/{incident_id}/reviews")
    first = queue["items"][0]["report_id"]
    axe_found: dict[str, int] = {}
    live_server.sign_in(page, "demo-reviewer")
    page.goto(live_server.url("/"))
    tally = Tally(page)

    _menu(page, tally, "People")
    page.wait_for_url(f"**/incidents/{incident_id}/people")
    tally.tap(page.get_by_label("Name", exact=True), "fill", "Sunitta")
    tally.tap(page.get_by_role("button", name="Search", exact=True))
    page.wait_for_url("**q=Sunitta*")
    found = page.locator("li.person").first
    assert "Sunita Bhandari" in found.inner_text()  # one letter too many still finds her
    box = found.bounding_box()
    assert box is not None and box["y"] < WIDTHS[width]["height"]  # right under the search
    text = _check(page, "people-search", axe_found)
    assert "1 person matches" in text
    screenshot(page, f"task-{width}-reviewer-search")

    tally.tap(found.get_by_role("link", name=re.compile("Sunita Bhandari")).first)
    page.wait_for_url("**/people/*")
    text = _check(page, "person", axe_found)
    assert "Safe" in text or "SAFE" in text
    tally.tap(page.locator("#current-status").get_by_role("link", name="the report"))
    page.wait_for_url("**/reports/*")
    text = _check(page, "report", axe_found)
    assert "Registration desk entry. Sunita Bhandari, 44" in text
    assert "No investigation saved for this report yet." not in text  # a recorded real run
    sunita = page.url.rsplit("/", 1)[-1].split("?")[0]

    tally.tap(page.get_by_role("button", name="Investigate"))
    page.locator('#investigation-card[data-status="UNAVAILABLE"]').wait_for()
    card = page.locator("#investigation-card").inner_text()
    assert "Not checked" in card and "nothing was sent" in card
    assert "Live checks are switched off on this server" in card
    assert "live checks are off" in card and "passphrase" not in card.split("What to do next")[1]
    assert "UNAVAILABLE" not in card  # the code stays folded in "Technical details"
    saved = page.locator("#investigation-latest-saved")
    assert "Registration desk entry. Sunita Bhandari" in saved.inner_text()
    _check(page, "report-investigated", axe_found)
    screenshot(page, f"task-{width}-reviewer-investigated")

    # she was registered at the desk in person: the reviewer decides on her saved result
    tally.tap(saved.locator("details.review-change summary"))
    tally.tap(saved.get_by_label(re.compile("^First-hand confirmed")), "check")
    tally.tap(
        saved.get_by_label("How did you decide?"),
        "fill",
        "Our desk volunteer registered her in person",
    )
    _check(page, "report-deciding", axe_found)
    screenshot(page, f"task-{width}-reviewer-deciding")
    tally.tap(saved.get_by_role("button", name="Record decision"))
    page.wait_for_url("**reviewed=1*")
    decided = page.locator('article.investigation-card[data-decided="true"]')
    assert decided.count() == 1 and "demo-reviewer" in decided.inner_text()
    _check(page, "report-decided", axe_found)
    screenshot(page, f"task-{width}-reviewer-decided")

    _report(width, "reviewer finds Sunitta, investigates and decides", tally, page, axe_found)

    # not part of the task's count: the Reviews page no longer lists her report
    _menu(page, Tally(page), "Reviews")
    page.wait_for_url(f"**/incidents/{incident_id}/reviews")
    _check(page, "reviews", axe_found)
    assert page.locator(f"#review-{sunita}").count() == 0  # it has left the queue
    assert page.locator(f"#review-{first}").count() == 1
    live_server.reset()


def test_a_coordinator_links_a_duplicate(
    live_server: Any, sized: tuple[str, Any], screenshot: Callable[[Any, str], Path]
) -> None:
    width, page = sized
    incident_id = live_server.incident_id()
    for name, status, location in (
        ("Kamala Adhikari", "missing", "Khukundol settlement"),
        ("Kamala Adhikary", "safe", "Chautara camp"),
    ):
        live_server.api(
            "POST",
            "/api/reports",
            {
                "incident_id": incident_id,
                "source": "Tatopani Relief Camp Demo",
                "summary": f"{name}: {status}.",
                "original_text": f"Desk entry: {name}, 38, {status}.",
                "person": {"name": name, "age": 38},
                "status": status,
                "location": location,
            },
            as_user="demo-reviewer",
        )
    axe_found: dict[str, int] = {}
    live_server.sign_in(page, "demo-coordinator")
    page.goto(live_server.url("/"))
    tally = Tally(page)

    _menu(page, tally, "People")
    page.wait_for_url(f"**/incidents/{incident_id}/people")
    tally.tap(page.locator("#duplicates-link"))
    page.wait_for_url(f"**/incidents/{incident_id}/duplicates")
    pair = page.locator("li.duplicate-pair", has_text="Kamala Adhikary")
    assert pair.locator(".side").count() == 2
    text = _check(page, "duplicates", axe_found)
    assert "Awaiting a decision" in text
    for fact in ("Kamala Adhikari", "Kamala Adhikary", "Chautara camp", "Alert"):
        assert fact in pair.inner_text(), fact
    screenshot(page, f"task-{width}-duplicate-pair")
    tally.tap(
        pair.get_by_label("Note (why, and who decided)"), "fill", "Same husband's name at the desk"
    )
    tally.tap(pair.get_by_role("button", name="Same person"))
    page.wait_for_url("**/duplicates?*decided=same*")
    decided = page.locator("#pair-decided")
    said = decided.inner_text()
    assert "left the queue" in said and "Kamala Adhik" in said
    assert decided.locator("li.alert-closed-by-decision").count() == 1  # names the alert
    _check(page, "duplicates-decided", axe_found)
    screenshot(page, f"task-{width}-duplicate-decided")

    tally.tap(decided.locator("a[href^='/people/']").first)
    page.wait_for_url("**/people/*")
    text = _check(page, "person-linked", axe_found)
    status = page.locator("#current-status").inner_text()
    assert "SAFE" in status.upper() and "MISSING" not in status.upper()  # the group's status
    assert "Kamala Adhikari" in text and "Kamala Adhikary" in text  # both records, one person
    screenshot(page, f"task-{width}-duplicate-person")
    _report(width, "coordinator links a duplicate", tally, page, axe_found)
    live_server.reset()
