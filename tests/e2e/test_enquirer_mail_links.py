"""The enquirer's side of issue 41 in a real browser on a phone (390 px): a request is
taken, the confirmation mail reaches a real SMTP server (aiosmtpd), its link shows a page
with one button (axe finds nothing serious), the press confirms; the news of the person
comes by mail, and its unsubscribe link stops the mail. The server is a real ``trace
serve --demo`` with its delivery worker, pointed at the test's mail server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.message import Message
from typing import Any

import pytest
from e2e_support import LiveServer, MailInbox, mail_inbox, running_server
from test_setup_and_axe import _axe

LINK = re.compile(r"http://127\.0\.0\.1:\d+/subscriptions/(?:confirm|unsubscribe)/[A-Za-z0-9_-]+")


@pytest.fixture(scope="module")
def inbox() -> Iterator[tuple[MailInbox, int]]:
    with mail_inbox() as found:
        yield found


@pytest.fixture(scope="module")
def mail_server(
    tmp_path_factory: pytest.TempPathFactory, inbox: tuple[MailInbox, int]
) -> Iterator[LiveServer]:
    env = {"TRACE_SMTP_URL": f"smtp://127.0.0.1:{inbox[1]}", "TRACE_MAIL_FROM": "trace@e2e.test"}
    with running_server(tmp_path_factory.mktemp("trace-mail"), env, []) as server:
        yield server


def _text(message: Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_enquirer_confirms_gets_news_and_unsubscribes_on_a_phone(
    browser: Any,
    mail_server: LiveServer,
    inbox: tuple[MailInbox, int],
    screenshot: Any,
) -> None:
    mails = inbox[0]
    incident_id = mail_server.incident_id()
    people = mail_server.api("GET", f"/api/incidents/{incident_id}/people?limit=200")["items"]
    person = next(p for p in people if (p.get("group_status") or {}).get("status") == "missing")
    taken = mail_server.api(
        "POST",
        f"/api/incidents/{incident_id}/inquiries",
        {
            "person_id": person["id"],
            "enquirer": {
                "name": "Anil Shrestha",
                "relationship": "brother",
                "email": "anil@e2e.test",
            },
            "consent": True,
        },
    )
    confirmation = mails.wait_for(1)[0]
    assert confirmation["To"] == "anil@e2e.test"
    confirm_url = next(u for u in LINK.findall(_text(confirmation)) if "/confirm/" in u)

    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(confirm_url)
        assert page.get_by_role("heading", level=1).text_content() == "Confirm your email address"
        assert page.get_by_role("button").count() == 1 or page.locator("main button").count() == 1
        serious = [v for v in _axe(page) if v["impact"] in {"serious", "critical"}]
        assert serious == [], serious
        screenshot(page, "enquirer-confirm-390")
        page.get_by_role("button", name="Confirm my address").click()
        page.wait_for_load_state()
        assert "Address confirmed" in (page.get_by_role("heading", level=1).text_content() or "")
        screenshot(page, "enquirer-confirmed-390")

        # the person is reported safe: the confirmed enquirer hears of it
        report = mail_server.api(
            "POST",
            "/api/reports",
            {
                "incident_id": incident_id,
                "summary": "Found safe at the school shelter.",
                "original_text": "Our volunteer met him at the school shelter this morning.",
                "person": {"name": person["name"], "person_id": person["id"]},
                "status": "safe",
            },
            as_user="demo-reporter",  # publishes for the hospital
        )
        assert report["person_id"]
        news = mails.wait_for(2)[1]
        assert "Safe" in news["Subject"] and news["List-Unsubscribe-Post"]
        body = _text(news)
        assert taken["id"] in body and "Someone reported this person safe." in body
        unsubscribe_url = next(u for u in LINK.findall(body) if "/unsubscribe/" in u)
        assert news["List-Unsubscribe"] == f"<{unsubscribe_url}>"
        page.goto(unsubscribe_url)
        serious = [v for v in _axe(page) if v["impact"] in {"serious", "critical"}]
        assert serious == [], serious
        screenshot(page, "enquirer-unsubscribe-390")
        page.get_by_role("button", name="Stop all mail about this request").click()
        page.wait_for_load_state()
        assert "No more mail" in (page.get_by_role("heading", level=1).text_content() or "")
        page.goto(confirm_url)  # a used confirm link is refused in words
        assert "This link is not valid any more" in (page.locator("main").text_content() or "")
        screenshot(page, "enquirer-link-used-390")
    finally:
        context.close()
