"""Issue 41's pages in a real browser: a desk volunteer (reporter) on a phone (390 px)
searches, finds no one and takes a tracing request through the form; the enquirer follows
the confirmation link from the real mail (aiosmtpd) and presses the one button; after a
death report the coordinator sees "Tell the family in person" with the enquirer's contacts
on the Follow-ups page (390 and 1280 px), and marks it done; no mail goes out about the
death. A reporter sees no contacts. Every page: axe-core finds nothing serious or
critical, and no code or id shows outside folded details."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from email.message import Message
from typing import Any

import pytest
from e2e_support import LiveServer, MailInbox, mail_inbox, running_server
from test_setup_and_axe import _axe

CONFIRM = re.compile(r"http://127\.0\.0\.1:\d+/subscriptions/confirm/[A-Za-z0-9_-]+")
# an id or a code a person should not have to read (they stay in folded details)
CODE = re.compile(
    r"\b(?:inq|per|evt|dlv|whk|inc|rep|fup)_[0-9a-f]{6,}"
    r"|\b(?:status\.changed|alert\.opened|alert\.closed|inquiry\.created|inform_in_person)\b"
)
NAME = "Bikash Deskphone"
ENQUIRER = "Anil Deskphone"
EMAIL = "anil.deskphone@e2e.test"


@pytest.fixture(scope="module")
def inbox() -> Iterator[tuple[MailInbox, int]]:
    with mail_inbox() as found:
        yield found


@pytest.fixture(scope="module")
def desk_server(
    tmp_path_factory: pytest.TempPathFactory, inbox: tuple[MailInbox, int]
) -> Iterator[LiveServer]:
    env = {
        "TRACE_SMTP_URL": f"smtp://127.0.0.1:{inbox[1]}",
        "TRACE_MAIL_FROM": "trace@e2e.test",
        "TRACE_DELIVERY_RETRY_SECONDS": "0.2",
        "TRACE_WEBHOOK_PRIVATE_ADDRESSES": "allow",  # the test's receiver is on 127.0.0.1
    }
    with running_server(tmp_path_factory.mktemp("trace-desk"), env, []) as server:
        yield server


def _checked(page: Any, screenshot: Any, name: str) -> str:
    """axe finds nothing serious; the words shown hold no code; a screenshot to look at.
    Returns the main part's visible text."""
    serious = [v for v in _axe(page) if v["impact"] in {"serious", "critical"}]
    assert serious == [], serious
    shown = page.locator("main").inner_text()  # a closed <details> is not shown
    assert not CODE.search(shown), CODE.search(shown)
    width = page.viewport_size["width"]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    screenshot(page, f"{name}-{width}")
    return str(shown)


def _phone(browser: Any) -> Any:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.set_default_timeout(15_000)
    return context


def _body_text(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_desk_request_on_a_phone_confirmed_by_mail_then_a_follow_up_after_a_death(
    browser: Any, desk_server: LiveServer, inbox: tuple[MailInbox, int], screenshot: Any
) -> None:
    mails, server = inbox[0], desk_server
    incident_id = server.incident_id()

    # 1. the desk volunteer, on a phone: search, not found, register a request
    desk = _phone(browser)
    page = desk.new_page()
    try:
        server.sign_in(page, "demo-reporter")
        page.goto(server.url(f"/incidents/{incident_id}/people"))
        page.get_by_label("Name", exact=True).fill(NAME)
        page.get_by_role("button", name="Search").click()
        page.get_by_role("link", name="Not found: register a request").click()
        assert page.get_by_label("Name (required)", exact=True).input_value() == NAME  # prefilled
        page.get_by_label("Their name (required)", exact=True).fill(ENQUIRER)
        page.get_by_label("Relationship to the person (required)", exact=True).fill("brother")
        page.get_by_label("Email address").fill(EMAIL)
        page.get_by_label("Language of their messages").select_option("ne")
        shown = _checked(page, screenshot, "inquiry-form")
        assert "kept only to tell them news of this person" in shown and "90 days" in shown
        page.get_by_role("button", name="Take the request").click()
        assert "/inquiries/new" in page.url  # not sent: the consent box is required
        page.get_by_label(re.compile("They agree")).check()
        page.get_by_role("button", name="Take the request").click()
        page.wait_for_url(re.compile(r"/people/per_[0-9a-f]+\?inquiry=taken"))
        person_id = page.url.split("/people/")[1].split("?")[0]
        shown = _checked(page, screenshot, "inquiry-taken")
        assert "Request taken." in shown and "1 person is looking for them." in shown
        assert EMAIL not in page.content() and ENQUIRER not in page.content()
        assert page.locator("#looking-contacts").count() == 0  # a reporter sees no contacts
    finally:
        desk.close()

    # 2. the enquirer: the mail's link, one button
    confirmation = mails.wait_for(1)[-1]
    assert confirmation["To"] == EMAIL
    confirm_url = CONFIRM.findall(_body_text(confirmation))[0]
    enquirer = _phone(browser)
    page = enquirer.new_page()
    try:
        page.goto(confirm_url)
        assert page.locator("main button").count() == 1
        _checked(page, screenshot, "inquiry-confirm-link")
        page.locator("main button").click()
        page.wait_for_load_state()
        # in the enquirer's language, Nepali, chosen on the desk's form (issue 42)
        assert "ठेगाना पक्का भयो" in (page.get_by_role("heading", level=1).text_content() or "")
    finally:
        enquirer.close()

    # 3. a death is reported; the coordinator sees the follow-up and marks it done
    mails_before = len(mails.messages)
    server.api(
        "POST",
        "/api/reports",
        {
            "incident_id": incident_id,
            "summary": "Died at the district hospital.",
            "original_text": "Identified by his brother at the district hospital.",
            "person": {"name": NAME, "person_id": person_id},
            "status": "deceased",
        },
        as_user="demo-reporter",
    )
    coordinator = _phone(browser)
    page = coordinator.new_page()
    try:
        server.sign_in(page, "demo-coordinator")
        page.goto(server.url(f"/people/{person_id}"))
        page.locator("#looking-contacts summary").click()  # unfold: one audited read
        page.locator("#looking-contacts .enquirer-email").wait_for()
        assert page.locator("#looking-contacts .enquirer-email").inner_text() == EMAIL
        assert "address confirmed" in page.locator("#looking-contacts").inner_text()
        _checked(page, screenshot, "inquiry-contacts-unfolded")
        page.set_viewport_size({"width": 1280, "height": 900})
        _checked(page, screenshot, "inquiry-contacts-unfolded")
        page.set_viewport_size({"width": 390, "height": 844})

        page.locator("#menu summary").click()
        page.get_by_role("link", name="Follow-ups").click()
        follow_up = page.locator("article.follow-up").filter(has_text=NAME)
        assert follow_up.count() == 1
        assert EMAIL in follow_up.inner_text() and ENQUIRER in follow_up.inner_text()
        shown = _checked(page, screenshot, "follow-ups")
        assert "Tell the family in person" in shown
        page.set_viewport_size({"width": 1280, "height": 900})
        _checked(page, screenshot, "follow-ups")
        follow_up.get_by_role("button", name="Mark done: the family was told").click()
        page.wait_for_url(re.compile(r"follow-ups\?done=1"))
        shown = _checked(page, screenshot, "follow-up-done")
        assert "Marked done." in shown and f"The family of {NAME} was told" in shown
        assert page.locator("article.follow-up").filter(has_text=NAME).count() == 0
    finally:
        coordinator.close()
    # the worker (polling every 0.1 s) fanned the death's event out seconds ago: no mail
    time.sleep(0.2)
    assert len(mails.messages) == mails_before


def test_coordinator_registers_a_webhook_sees_its_secret_once_and_the_failed_messages(
    browser: Any, desk_server: LiveServer, screenshot: Any
) -> None:
    server = desk_server
    incident_id = server.incident_id()
    context = _phone(browser)
    page = context.new_page()
    try:
        server.sign_in(page, "demo-coordinator")
        page.goto(server.url(f"/incidents/{incident_id}/follow-ups"))
        page.locator("#menu summary").click()
        page.locator("#nav-webhooks").click()
        page.get_by_label("The partner's URL (required)").fill("https://partner.e2e.test/trace")
        page.get_by_label("status changes").check()
        page.get_by_role("button", name="Register").click()
        secret = page.locator("#webhook-secret").input_value()
        assert secret.startswith("whsec_")
        assert "shown this once" in page.locator("#webhook-created").inner_text()
        serious = [v for v in _axe(page) if v["impact"] in {"serious", "critical"}]
        assert serious == [], serious  # no screenshot: the secret is never in an artifact
        page.goto(server.url(f"/incidents/{incident_id}/webhooks"))
        assert secret not in page.content() and "whsec_" not in page.content()
        shown = _checked(page, screenshot, "webhooks")
        assert "https://partner.e2e.test/trace — status changes" in shown
        page.get_by_role("link", name="Messages that failed").first.click()
        shown = _checked(page, screenshot, "deliveries")
        assert "Mail waits" not in shown  # this server has a mail server
        assert "Nothing failed." in shown
    finally:
        context.close()
