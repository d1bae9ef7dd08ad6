"""In a real browser at 390 px: the Reviews page is a list of compact cards that unfold,
in priority order, with filters and "assign to me" (issue 40, build item 5).

The seeded demo's queue holds two NEEDS_REVIEW results after a reset (no model needed).
The page's height at 390 px is printed (``pytest -s``) and screenshots are saved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

PHONE = {"width": 390, "height": 844}


def _height(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))


def test_the_queue_is_compact_on_a_phone(
    live_server: Any, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    live_server.reset()
    incident_id = live_server.incident_id()
    page.set_viewport_size(PHONE)
    page.goto(live_server.url(f"/incidents/{incident_id}/reviews"))
    height = _height(page)
    print(f"\nReviews page at 390 px, 2 items: {height} px")
    screenshot(page, "review-queue-phone")
