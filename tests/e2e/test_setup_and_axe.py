"""In a real browser, at 390 and 1280 px: axe-core finds no serious or critical violation
on any page, a coordinator imports a shelter list with one bad row, and an admin opens
an incident and gives someone a role in it, all without a terminal (issue 40, items 6-9).

Each task counts its taps and the screens of scrolling they need, and writes them with
the axe results to ``test-artifacts/`` (``axe-<width>.json``, ``tasks-<width>.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import REPO

ARTIFACTS = REPO / "test-artifacts"
WIDTHS = {"phone": {"width": 390, "height": 844}, "desk": {"width": 1280, "height": 900}}
BLOCKING = {"serious", "critical"}
SHELTER_LIST = (
    "full_name,age,status,last_known_location\nAxe Sweep Person,41,safe,Camp 4\n,6,safe,Camp 4\n"
)


# target-size (WCAG 2.2, 2.5.8: 24 px, or spaced apart) is off in axe by default
AXE_OPTIONS = {
    "resultTypes": ["violations"],
    "rules": {"target-size": {"enabled": True}},
    "iframes": False,
}


def _axe(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page (axe-playwright-python adds its script first)."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page, options=AXE_OPTIONS).response["violations"]
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in found
    ]


# What a finger taps on a phone: 44 by 44 px at least (links inside sentences excepted).
TARGETS = (
    "button, a.button, select, textarea, summary, header a, .pager a, .choice,"
    " input:not([type=hidden]):not([type=radio]):not([type=checkbox])"
)


def _small_targets(page: Any) -> list[str]:
    found: list[str] = page.evaluate(
        """selector => [...document.querySelectorAll(selector)]
        .filter(e => e.getClientRects().length)
        .map(e => [e, e.getBoundingClientRect()])
        .filter(([e, r]) => r.height < 43.5 || r.width < 43.5)
        .map(([e, r]) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}`
          + ` "${(e.innerText || e.value || '').trim().slice(0, 30)}"`
          + ` ${Math.round(r.width)}x${Math.round(r.height)}`)""",
        TARGETS,
    )
    return found


def _context(browser: Any, width: str) -> Any:
    viewport = WIDTHS[width]
    context = browser.new_context(
        viewport=viewport, device_scale_factor=1, is_mobile=width == "phone"
    )
    context.set_default_timeout(15_000)
    return context


@pytest.fixture(params=list(WIDTHS))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    context = _context(browser, request.param)
    yield request.param, context.new_page()
    context.close()


def _pages(server: Any) -> dict[str, str]:
    incident_id = server.incident_id()
    reports = server.api("GET", f"/api/incidents/{incident_id}/reports?limit=500")["items"]
    alerts = server.api("GET", f"/api/incidents/{incident_id}/alerts")["items"]
    maya = next(r["person_id"] for r in reports if r["person"]["name"] == "Maya Gurung")
    with_card = next(r["id"] for r in reports if r["original_text"].startswith("Duty officer"))
    return {
        "home": "/",
        "incident-new": "/incidents/new",
        "members": f"/incidents/{incident_id}/members",
        "people": f"/incidents/{incident_id}/people",
        "people-search": f"/incidents/{incident_id}/people?q=Maya",
        "person": f"/people/{maya}",
        "reports": f"/incidents/{incident_id}/reports",
        "report": f"/reports/{with_card}",
        "reviews": f"/incidents/{incident_id}/reviews",
        "duplicates": f"/incidents/{incident_id}/duplicates",
        "alert-close": f"/alerts/{alerts[0]['id']}/close",
        "publish": f"/publish?incident_id={incident_id}",
        "import": f"/import?incident_id={incident_id}",
        "export": f"/export?incident_id={incident_id}",
        "audit": "/audit",
        "account": "/account",
        "reset": "/demo/reset",
        "not-found": "/reports/rep_does_not_exist",
    }


def test_axe_finds_nothing_serious_on_any_page(
    live_server: Any, sized: tuple[str, Any], screenshot: Callable[[Any, str], Path]
) -> None:
    width, page = sized
    results: dict[str, list[dict[str, Any]]] = {}
    small: dict[str, list[str]] = {}
    page.goto(live_server.url("/login"))
    results["login"] = _axe(page)
    live_server.sign_in(page, "demo-admin")
    for name, path in _pages(live_server).items():
        page.goto(live_server.url(path))
        results[name] = _axe(page)
        if name in {"people-search", "audit"}:
            screenshot(page, f"axe-{width}-{name}")
        if name == "people-search":  # the people found come right under the search box
            found = page.locator("li.person").first.bounding_box()
            assert found is not None and found["y"] < WIDTHS[width]["height"], found
        if width == "phone":
            menu = page.locator("details.menu > summary")
            if menu.count() == 0:
                small[name] = ["no menu"]
                continue
            menu.click()  # the folded menu's links too
            small[name] = _small_targets(page)
    page.context.clear_cookies()
    live_server.sign_in(page, "demo-reporter")  # one who publishes: refused beside fields
    page.goto(live_server.url(_pages(live_server)["publish"]))
    page.get_by_label("Person's name").fill("Sweep Person")
    page.locator("#publish-form button[type=submit]").click()  # no summary, no status
    page.locator("#form-errors").wait_for()
    results["publish-refused"] = _axe(page)
    screenshot(page, f"axe-{width}-publish-refused")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-{width}.json").write_text(json.dumps(results, indent=1))
    (ARTIFACTS / f"small-targets-{width}.json").write_text(json.dumps(small, indent=1))
    blocking = {
        name: [v["id"] for v in found if v["impact"] in BLOCKING] for name, found in results.items()
    }
    assert {name: ids for name, ids in blocking.items() if ids} == {}
    assert {name: found for name, found in small.items() if found} == {}


class Tally:
    """Taps and screens of scrolling a task needs: before each tap, how far below the
    first screen (or the current one) the control lies, in screen heights."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.taps = 0
        self.screens = 0.0

    def tap(self, locator: Any, action: str = "click", *args: Any) -> None:
        box = locator.evaluate(
            "e => { const r = e.getBoundingClientRect();"
            " return [r.top + window.scrollY, r.bottom + window.scrollY, window.scrollY,"
            " window.innerHeight]; }"
        )
        top, bottom, scrolled, height = box
        if bottom > scrolled + height:
            self.screens += (bottom - (scrolled + height)) / height
        elif top < scrolled:
            self.screens += (scrolled - top) / height
        self.taps += 1
        getattr(locator, action)(*args)

    def figures(self) -> dict[str, float]:
        return {"taps": self.taps, "screens": round(self.screens, 2)}


def _menu(page: Any, tally: Tally, name: str) -> None:
    """A link of the main menu, opening the menu first where it is folded (a phone)."""
    toggle = page.locator("details.menu > summary")
    if toggle.count() and toggle.is_visible() and not page.locator("details.menu[open]").count():
        tally.tap(toggle)
    tally.tap(page.get_by_role("navigation", name="Main").get_by_role("link", name=name))


def _record(width: str, task: str, tally: Tally) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"tasks-{width}.json"
    figures = json.loads(path.read_text()) if path.exists() else {}
    figures[task] = tally.figures()
    path.write_text(json.dumps(figures, indent=1))


def test_a_coordinator_imports_a_shelter_list_with_one_bad_row(
    live_server: Any,
    sized: tuple[str, Any],
    screenshot: Callable[[Any, str], Path],
    tmp_path: Path,
) -> None:
    width, page = sized
    upload = tmp_path / "camp-4.csv"
    upload.write_text(SHELTER_LIST)
    live_server.sign_in(page, "demo-coordinator")
    page.goto(live_server.url("/"))
    tally = Tally(page)
    _menu(page, tally, "Import")
    tally.tap(page.get_by_label("Source of a shelter list"), "fill", "Camp 4 Desk")
    tally.tap(page.get_by_label("File"), "set_input_files", str(upload))
    tally.tap(page.get_by_role("button", name="Upload and preview"))
    page.wait_for_url("**/import/*")
    assert "Line 3:" in page.locator("#import-problems").inner_text()
    assert "bytes" not in page.locator("main").inner_text()  # "95 B", not "95 bytes"
    assert _axe_blocking(page) == []
    screenshot(page, f"task-{width}-import-preview")
    tally.tap(page.get_by_role("button", name="Import the valid rows"))
    page.locator("#import-done").wait_for()
    assert "1 person added" in page.locator("#import-done").inner_text()
    screenshot(page, f"task-{width}-import-done")
    _record(width, "import a CSV with one bad row", tally)
    live_server.reset()


def _axe_blocking(page: Any) -> list[str]:
    return [v["id"] for v in _axe(page) if v["impact"] in BLOCKING]


def test_an_admin_opens_an_incident_and_adds_a_member(
    live_server: Any, sized: tuple[str, Any], screenshot: Callable[[Any, str], Path]
) -> None:
    width, page = sized
    name = f"Landslide {width}"
    member = "field-worker"  # made once at the server's command line, given a role twice
    if member not in live_server.accounts:
        live_server.add_user(member, "viewer", "Camp 4 Desk")
    live_server.sign_in(page, "demo-admin")
    page.goto(live_server.url("/"))
    tally = Tally(page)
    tally.tap(page.get_by_role("link", name="New incident"))
    page.wait_for_url("**/incidents/new")
    tally.tap(page.get_by_label("Name"), "fill", name)
    tally.tap(page.get_by_label("Time zone"), "select_option", "Asia/Kathmandu")
    tally.tap(page.get_by_role("button", name="Open the incident"))
    page.wait_for_url("**/members*")
    assert name in page.locator("h1").inner_text()
    tally.tap(page.get_by_label("User name"), "fill", member)
    tally.tap(page.get_by_label("Role", exact=True), "select_option", "reviewer")
    tally.tap(page.get_by_label("Organisation"), "fill", "Camp 4 Desk")
    tally.tap(page.get_by_role("button", name="Give the role"))
    page.wait_for_url("**/members?changed=*")
    row = page.locator("#members tr", has_text=member).first  # this incident's, then every
    assert "Reviewer" in row.inner_text()  # (the Members page is in the axe sweep)
    screenshot(page, f"task-{width}-members")
    _record(width, "create an incident and add a member", tally)
