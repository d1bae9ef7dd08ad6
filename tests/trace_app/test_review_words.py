"""Decisions show where results show (issue 23, item 3): the result card, the person
page and the Reviews page say the current decision in plain words, with who and when,
and the headline moves from "Needs review" to "Reviewed: ..." once a person decided on
the result shown. The API says the same, with the code beside the words."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient
from test_reviews import (  # the review tests' store helpers and signed-in reviewer
    REVIEWER,
    UNCLEAR_TEXT,
    client,  # noqa: F401  (a fixture)
    decide,
    incident,  # noqa: F401  (a fixture)
    publish,
    save_run,
)

from trace_app.domain.reviews import REVIEW_WORDS, ReviewValue
from trace_app.investigation.review_queue import card_headline
from trace_app.investigation.vocabulary import Status
from trace_app.store.db import Database

CODES = [value.value for value in ReviewValue]


def visible_text(page: str) -> str:
    """What a reader sees: the page without tags, attributes, scripts or form values."""
    body = page.split("<main", 1)[1]
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_every_decision_has_plain_words_and_no_code_word() -> None:
    assert set(REVIEW_WORDS) == set(ReviewValue)
    sentences = [value.sentence for value in ReviewValue]
    labels = [value.label for value in ReviewValue]
    assert len(set(sentences)) == len(set(labels)) == len(ReviewValue)
    for words in (*sentences, *labels):
        assert "_" not in words and not any(code in words for code in CODES)
    assert ReviewValue.RELAY_CONFIRMED.sentence == "A reviewer confirmed the relay"


@pytest.mark.parametrize("status", list(Status))
def test_the_headline_rule(status: Status) -> None:
    undecided = card_headline(status, None)
    assert undecided == status.headline
    decided = card_headline(status, ReviewValue.RELAY_CONFIRMED)
    if status is Status.NEEDS_REVIEW:
        assert (undecided, decided) == ("Needs review", "Reviewed: relay confirmed")
    else:  # only a NEEDS_REVIEW result is ever decided
        assert decided == undecided


def test_card_api_person_page_and_queue_show_the_decision(
    database: Database,
    incident: str,  # noqa: F811
    client: TestClient,  # noqa: F811
) -> None:
    report_id = publish(database, incident, UNCLEAR_TEXT)
    run_id = save_run(database, report_id)
    before = client.get(f"/api/reports/{report_id}/investigation").json()
    assert before["headline"] == "Needs review" and before["review"] is None
    page = visible_text(client.get(f"/reports/{report_id}").text)
    assert "Needs a person to check" in page and "No person has decided" in page

    assert decide(client, report_id, "relay_confirmed", "Phoned the camp.").status_code == 201

    after = client.get(f"/api/reports/{report_id}/investigation").json()
    assert after["headline"] == "Reviewed: relay confirmed"
    review = after["review"]
    assert review["decision"] == "relay_confirmed" and review["run_id"] == run_id
    assert review["decision_sentence"] == "A reviewer confirmed the relay"
    assert review["decision_label"] == "relay confirmed"
    assert review["decided_by"] == REVIEWER and review["decided_at"]

    report_page = visible_text(client.get(f"/reports/{report_id}").text)
    assert "Decided: Relay confirmed" in report_page  # a decided result looks decided
    assert "A reviewer confirmed the relay" in report_page and REVIEWER in report_page

    person_id = client.get(f"/api/reports/{report_id}").json()["person_id"]
    person = client.get(f"/api/people/{person_id}").json()
    shown = person["claims"][0]["investigation"]
    assert shown["headline"] == "Reviewed: relay confirmed"
    assert shown["review"]["decided_by"] == REVIEWER
    person_page = visible_text(client.get(f"/people/{person_id}").text)
    assert "Decided: Relay confirmed" in person_page
    assert "A reviewer confirmed the relay" in person_page and REVIEWER in person_page

    queue = visible_text(client.get(f"/incidents/{incident}/reviews?decided={report_id}").text)
    assert "Recently decided" in queue and "A reviewer confirmed the relay" in queue
    assert REVIEWER in queue
    for text in (report_page, person_page, queue):
        assert not any(code in text for code in CODES), "a decision's code word is shown"

    # a newer run awaits a decision again: the earlier one is shown, the headline is back
    save_run(database, report_id, minutes=30)
    again = client.get(f"/api/reports/{report_id}/investigation").json()
    assert again["headline"] == "Needs review"
    assert again["review"]["on_shown_run"] is False
    page = visible_text(client.get(f"/reports/{report_id}").text)
    assert "Needs a person to check" in page and "A reviewer confirmed the relay" in page
    assert "Decided:" not in page
