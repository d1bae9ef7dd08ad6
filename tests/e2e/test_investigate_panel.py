"""The Investigate panel in a real browser: a live check with the passphrase against a real
OpenAI-compatible stub on 127.0.0.1, then a refresh that shows the saved result and sends
nothing upstream.

The server runs from a folder outside the checkout with the default model id and no
``TRACE_RECORDED_INVESTIGATIONS``: it finds the shipped ``demo/recorded_investigations.json``
itself, so the seeded reports start with their REPLAYED runs (recorded with another
model), which a refused check still shows."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import PAGE_ACCOUNT, LiveServer, running_server

from modelgate.testing import StubChatServer, StubResponse
from trace_app.investigation.model_settings import PROMPT_VERSION

PASSPHRASE = "panel passphrase 4 tests"
NEMOTRON = "nvidia/nemotron-3.5-lightning-30b-a3b"
POLICE = "Nepal Police Demo"
RECORDED_MODEL = json.loads(
    (Path(__file__).resolve().parents[2] / "demo" / "recorded_investigations.json").read_text()
)["runs"][0]["model"]


class Server:
    """The live server (real accounts) and the stub model behind it."""

    def __init__(self, live: LiveServer, stub: StubChatServer) -> None:
        self.live = live
        self.stub = stub

    def url(self, path: str) -> str:
        return self.live.url(path)

    def get(self, path: str) -> Any:
        """A JSON GET made as a signed-in coordinator (a real session)."""
        return self.live.api("GET", path, as_user=PAGE_ACCOUNT)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("trace-investigate")
    with StubChatServer() as stub:
        env = {
            "TRACE_LIVE_PASSPHRASE": PASSPHRASE,
            "TRACE_MODEL_BASE_URL": stub.base_url,
            "TRACE_MODEL": NEMOTRON,
        }
        saved = os.environ.pop("TRACE_RECORDED_INVESTIGATIONS", None)
        try:
            with running_server(home, env, []) as live:
                yield Server(live, stub)
        finally:
            if saved is not None:
                os.environ["TRACE_RECORDED_INVESTIGATIONS"] = saved
        assert PASSPHRASE not in (home / "server.log").read_text()


@pytest.fixture
def page(server: Server, anonymous_page: Any) -> Any:
    """Signed in to this module's server (not the session's live server)."""
    server.live.sign_in(anonymous_page, PAGE_ACCOUNT)
    return anonymous_page


def _police_report(server: Server) -> str:
    incident = server.get("/api/incidents")["items"][0]["id"]
    reports = server.get(f"/api/incidents/{incident}/reports?limit=500")["items"]
    found: str = next(r["id"] for r in reports if r["source"] == POLICE)
    return found


def test_live_check_then_refresh_shows_the_saved_result_without_a_call(
    server: Server, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    report_id = _police_report(server)
    server.stub.add(
        StubResponse.answer(json.dumps({"attribution": "DIRECT", "referenced_source": "NONE"}))
    )
    page.goto(server.url(f"/reports/{report_id}"))
    replayed = page.locator("#investigation-card")
    assert replayed.get_attribute("data-mode") == "REPLAYED"  # the shipped recording
    assert RECORDED_MODEL in (replayed.text_content() or "")  # in the folded details
    assert server.stub.count == 0

    page.get_by_label("Live-check passphrase").fill(PASSPHRASE)
    page.get_by_role("button", name="Investigate").click()
    page.locator('#investigation-card[data-mode="LIVE"]').wait_for()  # the swapped-in card
    card = page.locator("#investigation-card")
    # the model said DIRECT, but the family's words ("They say") send it to a person
    assert card.get_attribute("data-status") == "NEEDS_REVIEW"
    assert card.get_attribute("data-mode") == "LIVE"
    assert "'They say'" in card.inner_text()  # the reason quotes the cue
    text = card.text_content() or ""  # the technical details are folded
    assert NEMOTRON in text and PROMPT_VERSION in text
    assert "reported by the provider" in text and "11 prompt + 7 completion" in text
    assert "Duty officer's log" in card.locator("figure.citation").inner_text()
    assert server.stub.count == 1
    body = server.stub.requests[0].json()
    assert (body["temperature"], body["max_tokens"]) == (0, 96)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    screenshot(page, "investigate-live")

    page.reload()
    card = page.locator("#investigation-card")
    card.wait_for()
    assert card.get_attribute("data-status") == "NEEDS_REVIEW"
    assert card.get_attribute("data-mode") == "CACHED"
    assert page.get_by_label("Live-check passphrase").input_value() == ""
    assert PASSPHRASE not in page.content()
    screenshot(page, "investigate-saved")

    # Investigate again without the passphrase: the saved run, still no call
    page.get_by_role("button", name="Investigate").click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#investigation-card").get_attribute("data-mode") == "CACHED"
    assert server.stub.count == 1
    assert server.get("/api/ledger")["requests"] == 1


def test_wrong_passphrase_shows_unavailable_beside_the_recorded_run(
    server: Server, page: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    incident = server.get("/api/incidents")["items"][0]["id"]
    reports = server.get(f"/api/incidents/{incident}/reports?limit=500")["items"]
    relay = next(r["id"] for r in reports if "Please share" in r["original_text"])
    before = server.stub.count
    page.goto(server.url(f"/reports/{relay}"))
    page.get_by_label("Live-check passphrase").fill("not it")
    assert page.locator("#investigation-card").get_attribute("data-mode") == "REPLAYED"
    page.get_by_role("button", name="Investigate").click()
    page.locator('#investigation-card[data-status="UNAVAILABLE"]').wait_for()
    card = page.locator("#investigation-card")
    assert card.get_attribute("data-status") == "UNAVAILABLE"
    assert "No model was asked" in card.inner_text()
    saved = page.locator("#investigation-latest-saved")
    assert "Most recent saved result for this report" in saved.inner_text()
    saved_card = page.locator("#investigation-saved-card")
    assert saved_card.get_attribute("data-mode") == "REPLAYED"
    saved_text = saved_card.text_content() or ""
    assert RECORDED_MODEL in saved_text and NEMOTRON not in saved_text
    assert server.stub.count == before
    screenshot(page, "investigate-refused-shows-recorded")


def test_no_js_investigate_redirects_and_a_reload_sends_nothing(
    server: Server, browser: Any, screenshot: Callable[[Any, str], Path]
) -> None:
    """Without JavaScript the form posts, gets 303 to the report page (Post/Redirect/Get),
    which shows the result; the passphrase field is empty and a reload asks nothing."""
    incident = server.get("/api/incidents")["items"][0]["id"]
    reports = server.get(f"/api/incidents/{incident}/reports?limit=500")["items"]
    camp = next(r["id"] for r in reports if r["source"] == "Tatopani Relief Camp Demo")
    server.stub.add(  # a label outside the set: FAILED, counted, not saved
        StubResponse.answer(json.dumps({"attribution": "MAYBE", "referenced_source": "NONE"}))
    )
    calls, counted = server.stub.count, server.get("/api/ledger")["requests"]
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        server.live.sign_in(page, PAGE_ACCOUNT)  # a plain form post: no script needed
        page.goto(server.url(f"/reports/{camp}"))
        page.get_by_label("Live-check passphrase").fill(PASSPHRASE)
        with page.expect_navigation():
            page.get_by_role("button", name="Investigate").click()
        assert f"/reports/{camp}?check=" in page.url
        card = page.locator("#investigation-card")
        assert card.get_attribute("data-status") == "FAILED"
        assert page.get_by_label("Live-check passphrase").input_value() == ""
        assert PASSPHRASE not in page.content()
        assert server.stub.count == calls + 1
        assert server.get("/api/ledger")["requests"] == counted + 1
        screenshot(page, "investigate-no-js-after-redirect")
        for _ in range(2):
            page.reload()
            assert page.locator("#investigation-card").get_attribute("data-status") == "FAILED"
        assert server.stub.count == calls + 1
        assert server.get("/api/ledger")["requests"] == counted + 1
    finally:
        context.close()


def test_htmx_check_clears_the_typed_passphrase(server: Server, page: Any) -> None:
    incident = server.get("/api/incidents")["items"][0]["id"]
    reports = server.get(f"/api/incidents/{incident}/reports?limit=500")["items"]
    other = next(r["id"] for r in reports if r["source"] == "Bhote Koshi Youth Network Demo")
    page.goto(server.url(f"/reports/{other}"))
    field = page.get_by_label("Live-check passphrase")
    field.fill("typed but wrong")
    page.get_by_role("button", name="Investigate").click()
    page.locator('#investigation-card[data-status="UNAVAILABLE"]').wait_for()
    assert page.get_by_label("Live-check passphrase").input_value() == ""
    assert page.url == server.url(f"/reports/{other}")  # htmx: no navigation
