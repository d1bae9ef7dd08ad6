"""The tracing-request pages (issue 41): the desk's form from the person page and from a
search that found no one, the person page's count for everyone, contacts only for
coordinators (each showing audited), erasure with its tombstone, the follow-ups after a
death, failed deliveries and "mail waits", and webhooks whose secret is shown once.
A real app on SQLite with the seeded demo, real accounts and sessions, real form tokens."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from accounts_helpers import ADMIN_ORGANIZATION, app_database, csrf, signed_in
from sqlalchemy import func, select

from trace_app.store.account_models import AuditEvent
from trace_app.store.models import Person
from trace_app.store.notification_models import Delivery, Inquiry, OutboxEvent
from trace_app.store.types import new_id, utc_now

EMAIL = "desk.enquirer-41@example.org"
PHONE = "+977 98 4444 0101"
ENQUIRER = "Anilpage Deskname"


def _form(**extra: str) -> dict[str, str]:
    return {
        "enquirer_name": ENQUIRER,
        "relationship": "brother",
        "email": EMAIL,
        "phone": PHONE,
        "language": "ne",
        "note": "Staying at the school shelter",
        "consent": "yes",
        **extra,
    }


def _reads(web: Any) -> int:
    with app_database(web.app).sessions() as s:
        found = s.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.action == "inquiry.read_contacts")
        )
        return int(found or 0)


def _person(web: Any, incident_id: str) -> dict[str, Any]:
    found: dict[str, Any] = web.get(f"/api/incidents/{incident_id}/people").json()["items"][0]
    return found


def _client(web: Any, role: str) -> Any:
    return signed_in(web.app, role=role, organization=ADMIN_ORGANIZATION)


def _post(client: Any, url: str, data: dict[str, str]) -> Any:
    return client.post(url, data={**data, "csrf_token": csrf(client)})


def test_a_reporter_takes_a_request_at_the_desk_and_never_sees_contacts(
    web: Any, incident_id: str
) -> None:
    person = _person(web, incident_id)
    reporter = _client(web, "reporter")
    page = reporter.get(f"/people/{person['id']}")
    assert page.status_code == 200
    assert "Someone is looking for this person" in page.text
    assert "No one has asked for this person at a desk yet." in page.text
    form = reporter.get(f"/people/{person['id']}/inquiries/new")
    assert form.status_code == 200
    assert "erased 90 days after the request closes" in form.text  # the incident's retention
    assert form.text.count("(required)") == 3  # their name, relationship, consent

    url = f"/incidents/{incident_id}/inquiries"
    refused = _post(reporter, url, _form(person_id=person["id"], consent=""))
    assert refused.status_code == 422
    assert 'id="form-errors"' in refused.text and "agree" in refused.text
    assert f'value="{EMAIL}"' in refused.text  # what was typed, shown again
    no_reach = _post(reporter, url, _form(person_id=person["id"], email="", phone=""))
    assert no_reach.status_code == 422 and "email address or a phone number" in no_reach.text
    with app_database(web.app).sessions() as s:
        assert s.scalars(select(Inquiry)).all() == []

    taken = _post(reporter, url, _form(person_id=person["id"]))
    assert taken.status_code == 303, taken.text
    assert taken.headers["location"] == f"/people/{person['id']}?inquiry=taken#looking-for"
    shown = reporter.get(taken.headers["location"])
    assert 'id="inquiry-taken"' in shown.text
    assert "1 person is looking for them." in shown.text
    assert EMAIL not in shown.text and PHONE not in shown.text and ENQUIRER not in shown.text
    assert "Who is looking, and how to reach them" not in shown.text
    assert reporter.get(f"/people/{person['id']}/inquiries").status_code == 403
    with app_database(web.app).sessions() as s:
        [row] = s.scalars(select(Inquiry))
        assert row.language == "ne" and row.email == EMAIL and row.created_by is not None
    assert _post(reporter, f"/inquiries/{row.id}/erase", {"confirm": "yes"}).status_code == 403
    assert _reads(web) == 0

    viewer = _client(web, "viewer")
    seen = viewer.get(f"/people/{person['id']}")
    assert "1 person is looking for them." in seen.text
    assert "Someone is looking for this person" not in seen.text
    assert viewer.get(f"/people/{person['id']}/inquiries/new").status_code == 403


def test_a_coordinator_sees_contacts_folded_each_showing_audited_and_erases(
    web: Any, incident_id: str
) -> None:
    person = _person(web, incident_id)
    coordinator = _client(web, "coordinator")
    url = f"/incidents/{incident_id}/inquiries"
    assert _post(coordinator, url, _form(person_id=person["id"])).status_code == 303
    page = coordinator.get(f"/people/{person['id']}")
    assert "Who is looking, and how to reach them" in page.text
    assert EMAIL not in page.text and PHONE not in page.text  # folded: not read yet
    assert _reads(web) == 0

    part = coordinator.get(f"/people/{person['id']}/inquiries?part=contacts")
    assert part.status_code == 200 and "<html" not in part.text
    assert EMAIL in part.text and PHONE in part.text and ENQUIRER in part.text
    assert "नेपाली" in part.text and "address not confirmed yet" in part.text
    assert _reads(web) == 1
    full = coordinator.get(f"/people/{person['id']}/inquiries")
    assert full.status_code == 200 and EMAIL in full.text
    assert _reads(web) == 2

    [inquiry_id] = re.findall(r'id="inquiry-(inq[^"]+)"', full.text)
    erased = _post(coordinator, f"/inquiries/{inquiry_id}/erase", {"confirm": "yes"})
    assert erased.status_code == 303
    after = coordinator.get(erased.headers["location"])
    assert 'id="inquiry-done"' in after.text
    assert re.search(r"Contacts erased on <time[^>]*>.*?</time> by coordinator-", after.text)
    assert EMAIL not in after.text and PHONE not in after.text and ENQUIRER not in after.text
    with app_database(web.app).sessions() as s:
        actions = list(s.scalars(select(AuditEvent.action)))
    assert actions.count("inquiry.erase") == 1 and "inquiry.create" in actions


def test_a_search_that_finds_no_one_registers_a_request_for_a_new_person(
    web: Any, incident_id: str
) -> None:
    reporter = _client(web, "reporter")
    name = "Bikash Nomatchdesk"
    search = reporter.get(f"/incidents/{incident_id}/people", params={"q": name})
    assert search.status_code == 200
    assert "Not found: register a request" in search.text
    link = re.search(r'href="([^"]+)" id="register-request"', search.text)
    assert link is not None
    form = reporter.get(link.group(1).replace("&amp;", "&"))
    assert form.status_code == 200 and f'value="{name}"' in form.text  # prefilled

    taken = _post(
        reporter, f"/incidents/{incident_id}/inquiries", _form(person_name=name, person_age="31")
    )
    assert taken.status_code == 303, taken.text
    person_id = taken.headers["location"].split("/")[2].split("?")[0]
    shown = reporter.get(f"/people/{person_id}")
    assert name in shown.text and "1 person is looking for them." in shown.text
    assert 'data-code="missing"' in shown.text  # registered as missing
    assert ADMIN_ORGANIZATION in shown.text  # by the desk's organisation
    with app_database(web.app).sessions() as s:
        person = s.get(Person, person_id)
        assert person is not None and person.age == 31

    viewer = _client(web, "viewer")
    found = viewer.get(f"/incidents/{incident_id}/people", params={"q": "Zzqx Nobodyhere"})
    assert "Not found: register a request" not in found.text


def test_follow_ups_after_a_death_show_contacts_audited_and_are_marked_done(
    web: Any, incident_id: str
) -> None:
    person = _person(web, incident_id)
    made = web.post(
        f"/api/incidents/{incident_id}/inquiries",
        json={
            "person_id": person["id"],
            "enquirer": {"name": ENQUIRER, "relationship": "wife", "phone": PHONE},
            "consent": True,
        },
    )
    assert made.status_code == 201, made.text
    died = web.post(
        "/api/reports",
        json={
            "incident_id": incident_id,
            "summary": "Died at the district hospital.",
            "original_text": "Identified by the family at the district hospital.",
            "person": {"name": person["name"], "person_id": person["id"]},
            "status": "deceased",
        },
    )
    assert died.status_code == 201, died.text
    coordinator = _client(web, "coordinator")
    before = _reads(web)
    page = coordinator.get(f"/incidents/{incident_id}/follow-ups")
    assert page.status_code == 200
    assert "Tell the family in person" in page.text and PHONE in page.text
    assert _reads(web) == before + 1
    mine = re.search(
        r'<article class="follow-up" id="follow-up-([^"]+)"(?:(?!</article>).)*' + re.escape(PHONE),
        page.text,
        re.DOTALL,
    )
    assert mine is not None
    done = _post(coordinator, f"/incidents/{incident_id}/follow-ups/{mine.group(1)}/done", {})
    assert done.status_code == 303
    after = coordinator.get(done.headers["location"])
    assert 'id="follow-up-marked"' in after.text
    assert f'id="follow-up-{mine.group(1)}"' not in after.text
    assert re.search(r"The family of <a[^>]*>[^<]+</a> was told; marked done", after.text)
    again = _post(coordinator, f"/incidents/{incident_id}/follow-ups/{mine.group(1)}/done", {})
    assert again.status_code == 409  # the error page, in words

    reporter = _client(web, "reporter")
    assert reporter.get(f"/incidents/{incident_id}/follow-ups").status_code == 403
    assert reporter.get(f"/incidents/{incident_id}/deliveries").status_code == 403
    menu = coordinator.get(f"/incidents/{incident_id}/people").text
    assert 'id="nav-follow-ups"' in menu and 'id="nav-webhooks"' in menu
    assert 'id="nav-follow-ups"' not in reporter.get(f"/incidents/{incident_id}/people").text


def test_failed_deliveries_are_said_in_words_and_mail_waits_without_a_server(
    web: Any, incident_id: str
) -> None:
    person = _person(web, incident_id)
    now = utc_now()
    with app_database(web.app).sessions() as s:
        event = OutboxEvent(
            id=new_id("evt"),
            incident_id=incident_id,
            kind="status.changed",
            person_id=person["id"],
            payload="{}",
            created_at=now,
            fanned_out_at=now,
        )
        s.add(event)
        s.flush()
        s.add(
            Delivery(
                id=new_id("dlv"),
                event_id=event.id,
                channel="webhook",
                target_id="whk_gone",
                state="dead",
                attempts=8,
                next_attempt_at=now + timedelta(hours=1),
                last_error="HTTP 503",
                created_at=now,
            )
        )
        s.commit()
    coordinator = _client(web, "coordinator")
    hub = coordinator.get(f"/incidents/{incident_id}/follow-ups").text
    assert "1 message failed." in hub and "Mail waits: no mail server is set up." in hub
    page = coordinator.get(f"/incidents/{incident_id}/deliveries")
    assert page.status_code == 200
    assert "Mail waits: no mail server is set up." in page.text
    assert "Gave up:" in page.text and "a partner's webhook (a change of status)" in page.text
    assert "after 8 tries" in page.text and f">{person['name']}</a>" in page.text
    # the code stays in the folded details
    details = page.text.split('<details class="codes">')
    assert "HTTP 503" not in details[0] and "HTTP 503" in page.text


def test_a_webhook_secret_is_shown_once_and_a_removed_webhook_is_gone(
    web: Any, incident_id: str
) -> None:
    coordinator = _client(web, "coordinator")
    url = f"/incidents/{incident_id}/webhooks"
    bad = _post(coordinator, url, {"url": "ftp://partner.example.org/x"})
    assert bad.status_code == 422 and 'id="form-errors"' in bad.text
    made = coordinator.post(
        url,
        data={
            "url": "https://partner.example.org/trace",
            "events": ["status.changed", "alert.closed"],
            "csrf_token": csrf(coordinator),
        },
    )
    assert made.status_code == 200, made.text
    [secret] = re.findall(r'value="(whsec_[A-Za-z0-9+/=]+)"', made.text)
    assert "shown this once" in made.text
    listed = coordinator.get(url)
    listed_line = "partner.example.org/trace</strong>\n      — status changes, alerts closed"
    assert listed_line in listed.text
    assert secret not in listed.text
    assert "whsec_" not in listed.text
    [webhook_id] = re.findall(r'id="remove-(whk[^"]+)"', listed.text)
    removed = _post(coordinator, f"{url}/{webhook_id}/remove", {})
    assert removed.status_code == 303
    after = coordinator.get(removed.headers["location"])
    assert 'id="webhook-removed"' in after.text and 'class="webhook-url"' not in after.text
    reporter = _client(web, "reporter")
    assert reporter.get(url).status_code == 403
    assert _post(reporter, url, {"url": "https://x.example.org/"}).status_code == 403


def test_the_desk_form_refuses_in_words_and_keeps_what_was_typed(
    web: Any, incident_id: str
) -> None:
    reporter = _client(web, "reporter")
    url = f"/incidents/{incident_id}/inquiries"
    old = _post(reporter, url, _form(person_name="Zzdesk Agecheck", person_age="old"))
    assert old.status_code == 422 and "Age must be a whole number from 0 to" in old.text
    assert 'value="Zzdesk Agecheck"' in old.text and 'value="old"' in old.text
    long_name = _post(reporter, url, _form(person_name="Zzdesk", enquirer_name="x" * 300))
    assert long_name.status_code == 422
    assert "The name of the person who is looking is too long." in long_name.text
    bad_mail = _post(reporter, url, _form(person_name="Zzdesk", email="not an address"))
    assert bad_mail.status_code == 422 and "does not look right" in bad_mail.text
    elsewhere = _post(reporter, url, _form(person_id="per_0000000000000000000000000000abcd"))
    assert elsewhere.status_code == 404
    no_desk = signed_in(web.app, role="coordinator", organization=None)  # no desk to publish for
    refused = _post(no_desk, url, _form(person_name="Zzdesk Nodesk"))
    assert refused.status_code == 403 and "no organisation" in refused.text
    with app_database(web.app).sessions() as s:
        assert s.scalars(select(Inquiry)).all() == []
        assert s.scalars(select(Person).where(Person.name.like("Zzdesk%"))).all() == []
