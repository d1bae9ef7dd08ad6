"""Trace in Nepali and Arabic in a real browser, at 390 and 1280 px (issue 42): sign in
from a Nepali or Arabic login page, publish a report, find the person, read the review
queue. Each step takes a screenshot (``test-artifacts/screenshots/lang-*.png``: look at
them, Devanagari and Arabic must not be boxes), runs axe-core (no serious or critical
violation), and checks the words a person reads. In Arabic the page runs right to left:
the bar is mirrored, the brand and the menu on the right.

The test signs in as its own coordinator (made once at the server's command line), so
the language it chooses never becomes the preference of an account other tests use.
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
ACCOUNT = "lang-coordinator"
AXE_OPTIONS = {
    "resultTypes": ["violations"],
    "rules": {"target-size": {"enabled": True}},
    "iframes": False,
}
# what each language says, from its catalogue (the person's name is data, in its script)
WORDS = {
    "ne": {
        "sign_in": "साइन इन",
        "published": "रिपोर्ट प्रकाशित भयो।",
        "alert": "सतर्कता सुरु भयो",
        "missing": "हराएको",
        "match": "मिल्यो",
        "reviews": "समीक्षा",
        "person": "सीता तामाङ",
    },
    "ar": {
        "sign_in": "تسجيل الدخول",
        "published": "نُشر البلاغ.",
        "alert": "رُفع تنبيه",
        "missing": "مفقود",
        "match": "مطابق",
        "reviews": "المراجعات",
        "person": "ليلى حسن",
    },
}


def _axe(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page, options=AXE_OPTIONS).response["violations"]
    return [f"{v['id']} ({v['impact']})" for v in found if v["impact"] in BLOCKING]


@pytest.fixture(params=[(lang, width) for lang in WORDS for width in WIDTHS], ids=str)
def lang_page(
    request: pytest.FixtureRequest, browser: Any, live_server: Any
) -> Iterator[tuple[str, str, Any]]:
    lang, width = request.param
    if ACCOUNT not in live_server.accounts:
        live_server.add_user(ACCOUNT, "coordinator", "Central Hospital Demo")
    context = browser.new_context(
        viewport=WIDTHS[width], device_scale_factor=1, is_mobile=width == "phone"
    )
    context.set_default_timeout(15_000)
    yield lang, width, context.new_page()
    context.close()


def _direction(page: Any, width: str) -> dict[str, float]:
    """Where the brand, the menu and the language menu sit (their centres, in px)."""
    menu = "details.menu > summary" if width == "phone" else "nav[aria-label] li:first-child a"
    return {
        name: page.locator(selector).first.evaluate(
            "e => { const r = e.getBoundingClientRect(); return r.left + r.width / 2; }"
        )
        for name, selector in (
            ("brand", "header .brand"),
            ("menu", f"header {menu}"),
            ("languages", "header nav.languages"),
        )
    }


def test_publish_find_and_review_in_nepali_and_arabic(
    live_server: Any,
    lang_page: tuple[str, str, Any],
    screenshot: Callable[[Any, str], Path],
) -> None:
    lang, width, page = lang_page
    words = WORDS[lang]
    direction = "rtl" if lang == "ar" else "ltr"
    incident_id = live_server.incident_id()
    axe: dict[str, list[str]] = {}

    def step(name: str) -> None:
        html = page.locator("html")
        assert html.get_attribute("lang") == lang and html.get_attribute("dir") == direction
        axe[name] = _axe(page)
        screenshot(page, f"lang-{lang}-{width}-{name}")

    # the login page, chosen by ?lang=, with the language menu
    page.goto(live_server.url(f"/login?lang={lang}"))
    assert page.locator("h1").inner_text() == words["sign_in"]
    assert page.locator("header nav.languages a").count() == 4
    step("login")
    page.locator("#name").fill(ACCOUNT)
    page.locator("#password").fill(live_server.accounts[ACCOUNT])
    page.locator("form.login button[type=submit]").click()
    page.wait_for_url(lambda url: "/login" not in url)

    # publish a report: the confirmation says what changed, in the language
    page.goto(live_server.url(f"/publish?incident_id={incident_id}"))
    name = f"{words['person']} {width}"
    page.locator("#summary").fill(f"{name} missing since the flood")
    page.locator("#original_text").fill(f"{name} was not at the camp this morning.")
    page.locator("#person_name").fill(name)
    page.locator("#status").select_option("missing")
    assert page.locator("#status option:checked").inner_text() == words["missing"]
    step("publish")
    page.locator("#publish").click()
    page.locator("#published").wait_for()
    published = page.locator("#published").inner_text()
    assert words["published"] in published and words["alert"] in published
    assert name in published  # the name is data: as it was written
    step("published")

    # find the person
    page.goto(live_server.url(f"/incidents/{incident_id}/people"))
    page.locator("#search-q").fill(name)
    page.locator("form.search button[type=submit]").click()
    page.locator("#search-result").wait_for()
    assert words["match"] in page.locator("#search-result").inner_text()
    found = page.locator("li.person").first
    assert name in found.inner_text() and words["missing"] in found.inner_text()
    step("find")

    # read the review queue
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    assert page.locator("h1").inner_text().startswith(words["reviews"])
    items = page.locator("li.review-item")
    if items.count():
        items.first.locator("summary").first.click()
        assert items.first.locator(".investigation-card").first.is_visible()
    step("reviews")

    # right to left: in Arabic the bar is mirrored. At 1280 px the brand and the menu's
    # links start on the right, the language menu ends on the left; at 390 px the brand
    # is on the right and the folded menu's button on the left (the language menu wraps
    # to a line of its own).
    places = _direction(page, width)
    middle = WIDTHS[width]["width"] / 2
    other = "languages" if width == "desk" else "brand"
    if lang == "ar":
        assert places["brand"] > middle, places
        assert (places["menu"] > places[other]) == (width == "desk"), places
    else:
        assert places["brand"] < middle, places
        assert (places["menu"] < places[other]) == (width == "desk"), places

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-lang-{lang}-{width}.json").write_text(json.dumps(axe, indent=1))
    assert {step_name: found for step_name, found in axe.items() if found} == {}
