"""Feedback on every action, and only the controls a role can use (issue 40, items 3-4):
the report page after Publish says what changed (a new record or an existing one, with a
link; an alert raised, joined or closed); a "same person" decision says which alert it
closed, with a link to the person; viewers see who can close alerts or decide
duplicates instead of controls that would refuse them."""

from __future__ import annotations

import html
import re
from typing import Any

from accounts_helpers import csrf, signed_in
from fastapi.testclient import TestClient


def _text(page: str) -> str:
    """What a reader sees of the page's main part: no tags, no attributes."""
    body = page.split("<main", 1)[1]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
    return re.sub(r" ([.,:;)])", r"\1", text)


def _publish(
    web: TestClient, incident_id: str, name: str, status: str, when: str, **extra: Any
) -> Any:
    body = {
        "incident_id": incident_id,
        "summary": f"{name}: {status}",
        "original_text": f"We spoke with the family of {name} at the school shelter.",
        "person": {"name": name, "age": 41, **extra},
        "status": status,
        "reported_at": when,
    }
    answer = web.post("/api/reports", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_the_report_page_after_publish_says_what_changed(web: TestClient, incident_id: str) -> None:
    missing = _publish(web, incident_id, "Words Test Person", "missing", "2026-07-15T08:00:00Z")
    first = web.get(f"/reports/{missing['id']}?published=1").text
    said = _text(first)
    assert "Report published. It started a new record: Words Test Person." in said
    assert "An alert was raised: Words Test Person is now listed as missing." in said
    assert f'<a href="/people/{missing["person_id"]}">Words Test Person</a>' in first

    safe = _publish(
        web,
        incident_id,
        "Words Test Person",
        "safe",
        "2026-07-15T10:00:00Z",
        person_id=missing["person_id"],
    )
    second = _text(web.get(f"/reports/{safe['id']}?published=1").text)
    assert "It was added to the existing record of Words Test Person, which already had 1" in second
    assert "The open alert for Words Test Person (raised 15 Jul" in second
    assert "was closed by this report." in second
    plain = _text(web.get(f"/reports/{safe['id']}").text)  # only right after publishing
    assert "Report published" not in plain


def test_a_same_person_decision_says_which_alert_closed_and_links_the_person(
    web: TestClient, incident_id: str
) -> None:
    lost = _publish(web, incident_id, "Sunita Decided", "missing", "2026-07-15T08:00:00Z")
    found = _publish(web, incident_id, "Sunitaa Decidedd", "safe", "2026-07-15T12:00:00Z")
    done = web.post(
        f"/people/{lost['person_id']}/links",
        data={
            "other_person_id": found["person_id"],
            "decision": "same",
            "note": "Same card number at the camp desk",
            "csrf_token": csrf(web),
        },
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"].endswith("decided=same")
    page = web.get(done.headers["location"]).text
    said = _text(page)
    assert "Decision recorded: these records are now shown as one person, Sunita Decided." in said
    assert "The open alert for Sunita Decided (raised 15 Jul" in said
    assert "a later report about the same person says they are safe." in said
    assert f'<a href="/people/{lost["person_id"]}">Sunita Decided</a>' in page


def test_viewers_see_who_can_instead_of_controls_they_cannot_use(
    web: TestClient, incident_id: str
) -> None:
    missing = _publish(web, incident_id, "Roles Test Person", "missing", "2026-07-15T08:00:00Z")
    _publish(web, incident_id, "Roles Test Persen", "seen", "2026-07-15T09:00:00Z")
    viewer = signed_in(web.app, role="viewer")  # type: ignore[arg-type]
    people = viewer.get(f"/incidents/{incident_id}/people").text
    assert "Close alert…" not in people
    assert "You cannot close or reopen alerts here. A reviewer, coordinator or admin" in people
    person = viewer.get(f"/people/{missing['person_id']}").text
    assert "Close alert…" not in person and 'action="/people/' not in person
    assert "You cannot decide whether two records are one person here." in person
    assert 'id="publish-about"' not in person  # a viewer publishes nothing
    # the codes stay out of the words a person reads (they are in data-code and details)
    for code in ("alerts:write", "links:write", "NEEDS_REVIEW", "REPLAYED"):
        assert code not in _text(person)
    mine = web.get(f"/people/{missing['person_id']}").text  # an admin sees the controls
    assert "Close alert…" in mine and "You cannot" not in mine
