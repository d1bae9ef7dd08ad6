"""The review queue and people's decisions, on SQLite and PostgreSQL.

Saved runs are written straight into the store (as the investigation saves them), so
each test controls what the rules see: the saved status, the model's labels and the
report text the run cites. The queue must show what the result card shows, a decision
must leave the saved run exactly as it was, and only a person's POST records one.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import TEST_OPERATOR, csrf, signed_in
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from trace_app.domain import reviews
from trace_app.domain.errors import InvalidInputError, NotFoundError
from trace_app.domain.publish import PersonInput, PublishReportInput, publish_report
from trace_app.domain.reviews import ReviewRefusedError, ReviewValue, latest_review
from trace_app.investigation import review_queue
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.store.models import ClaimStatus, Incident, InvestigationRun, ReviewDecision
from trace_app.store.types import new_id
from trace_app.web.app import create_app

START = datetime(2026, 7, 15, 8, 0, tzinfo=UTC)
# Texts whose cues the evidence rule reads (written for these tests).
HEARSAY_TEXT = "They say Anna Test was carried to the school. Nobody has seen her since."
FIRST_HAND_TEXT = "I registered Anna Test at our desk this morning; she is safe."
UNCLEAR_TEXT = "Anna Test, tent 4."


@pytest.fixture
def incident(database: Database) -> str:
    with database.session() as s:
        row = Incident(id=new_id("inc"), name="Review Test Incident")
        s.add(row)
        return row.id


def publish(database: Database, incident_id: str, body: str, minutes: int = 0) -> str:
    with database.session() as s:
        report = publish_report(
            s,
            PublishReportInput(
                incident_id=incident_id,
                source="River Clinic Test",
                summary=f"Report {minutes}: {body[:30]}",
                original_text=body,
                reported_at=START + timedelta(minutes=minutes),
                person=PersonInput(name="Anna Test", age=30),
                status=ClaimStatus.SEEN,
            ),
        )
        return report.id


def save_run(
    database: Database,
    report_id: str,
    *,
    status: str = "NEEDS_REVIEW",
    attribution: str = "UNCLEAR",
    source: str = "NONE",
    minutes: int = 0,
    reason: str = "The model could not tell where the information came from.",
) -> str:
    """A saved run as the investigation writes one; its citation is the report's text."""
    with database.session() as s:
        report_text, incident_id = s.execute(
            text("select original_text, incident_id from reports where id = :id"),
            {"id": report_id},
        ).one()
        run = InvestigationRun(
            id=new_id("inv"),
            incident_id=incident_id,
            report_id=report_id,
            status=status,
            mode="LIVE",
            model="scripted-test-model",
            prompt_version="test-v1",
            run_at=START + timedelta(hours=1, minutes=minutes),
            fingerprint=new_id("fp"),
            attribution=attribution,
            referenced_source=source,
            citations=[
                {
                    "role": "report",
                    "report_id": report_id,
                    "source": "River Clinic Test",
                    "excerpt": report_text,
                    "reported_at": START.isoformat(),
                }
            ],
            reason=reason,
            evidence=[],
            rules_version="trace-rules-2",
        )
        s.add(run)
        return run.id


REVIEWER = "queue-reviewer"


@pytest.fixture
def client(database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("TRACE_LIVE_PASSPHRASE", "NVIDIA_NIM_API_KEY", "TRACE_MODEL_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = TraceSettings(home=tmp_path / "home", database_url="sqlite://unused")
    # a reviewer (reviews:write) of every incident
    with signed_in(create_app(settings, db=database), role="reviewer", name=REVIEWER) as http:
        yield http


def queue_ids(client: TestClient, incident_id: str, **params: Any) -> list[str]:
    answer = client.get(f"/api/incidents/{incident_id}/reviews", params=params)
    assert answer.status_code == 200, answer.text
    return [item["report_id"] for item in answer.json()["items"]]


def decide(client: TestClient, report_id: str, decision: str, note: str = "checked") -> Any:
    body = {"decision": decision, "note": note}
    return client.post(f"/api/reports/{report_id}/review", json=body)


def run_row(database: Database, run_id: str) -> dict[str, Any]:
    """Every column of the stored run, as the database holds it."""
    with database.engine.connect() as conn:
        row = conn.execute(
            text("select * from investigation_runs where id = :id"), {"id": run_id}
        ).one()
    return dict(row._mapping)


# What the code keeps beside a saved run (ADR 0084); every other column is what was saved.
DECISION_COLUMNS = {
    "decided_status",
    "decided_reason",
    "decided_lowered_by",
    "decided_evidence",
    "decided_version",
    "awaiting_review",
}


def saved_columns(row: dict[str, Any]) -> dict[str, Any]:
    assert DECISION_COLUMNS <= set(row)
    return {name: value for name, value in row.items() if name not in DECISION_COLUMNS}


def decision_count(database: Database) -> int:
    with database.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(ReviewDecision)) or 0)


# --- what the queue holds -------------------------------------------------------------


def test_queue_holds_what_the_rules_mark_needs_review_oldest_first(
    database: Database, incident: str, client: TestClient
) -> None:
    unclear = publish(database, incident, UNCLEAR_TEXT, 1)
    lowered = publish(database, incident, HEARSAY_TEXT, 2)
    first_hand = publish(database, incident, FIRST_HAND_TEXT, 3)
    never_checked = publish(database, incident, UNCLEAR_TEXT + " Again.", 4)
    superseded = publish(database, incident, FIRST_HAND_TEXT + " Still.", 5)
    # saved out of order: the queue orders by the report's age, oldest first (no open
    # alert and no child or older person here: docs/trace.md, "Reviews")
    save_run(database, unclear, minutes=30)
    # saved COMPLETED, but today's evidence rule reads hearsay: the card shows NEEDS_REVIEW
    save_run(
        database,
        lowered,
        status="COMPLETED",
        attribution="DIRECT",
        minutes=10,
        reason="The report reads as first-hand.",
    )
    # saved COMPLETED and backed by a first-hand cue: stays COMPLETED, not in the queue
    save_run(database, first_hand, status="COMPLETED", attribution="DIRECT", minutes=5)
    # an older NEEDS_REVIEW run does not count once a newer run shows COMPLETED
    save_run(database, superseded, minutes=1)
    save_run(database, superseded, status="COMPLETED", attribution="DIRECT", minutes=40)

    answer = client.get(f"/api/incidents/{incident}/reviews").json()
    assert [i["report_id"] for i in answer["items"]] == [unclear, lowered]
    assert answer["total"] == 2 and answer["offset"] == 0 and answer["limit"] == 100
    assert never_checked not in queue_ids(client, incident)

    # each item is what the result card (GET .../investigation) shows
    for item in answer["items"]:
        card = client.get(f"/api/reports/{item['report_id']}/investigation").json()
        assert card["status"] == item["status"] == "NEEDS_REVIEW"
        assert item["reason"] == card["reason"]
        assert item["evidence"] == card["evidence"]
        assert item["citations"] == card["citations"]
        assert card["review"] is None and item["earlier_review"] is None
    hearsay = answer["items"][1]
    assert "'They say'" in hearsay["reason"]
    assert hearsay["excerpt"] == HEARSAY_TEXT
    assert {c["kind"] for c in hearsay["evidence"]} >= {"hearsay"}
    assert client.get(f"/api/reports/{first_hand}/investigation").json()["status"] == "COMPLETED"


def test_queue_pages_with_offset_and_limit(
    database: Database, incident: str, client: TestClient
) -> None:
    reports = [publish(database, incident, f"{UNCLEAR_TEXT} No {n}.", n) for n in range(5)]
    for n, report_id in enumerate(reports):
        save_run(database, report_id, minutes=n)
    assert queue_ids(client, incident, limit=2) == reports[:2]
    assert queue_ids(client, incident, offset=2, limit=2) == reports[2:4]
    last = client.get(f"/api/incidents/{incident}/reviews", params={"offset": 4, "limit": 2})
    assert [i["report_id"] for i in last.json()["items"]] == reports[4:]
    assert last.json()["total"] == 5
    assert queue_ids(client, incident, offset=10) == []
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"offset": "x"}):
        refused = client.get(f"/api/incidents/{incident}/reviews", params=bad)
        assert refused.status_code == 422 and refused.json()["code"] == "invalid_body"
    missing = client.get("/api/incidents/inc_nope/reviews")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_a_decision_leaves_the_queue_and_a_newer_run_enters_again(
    database: Database, incident: str, client: TestClient
) -> None:
    report_id = publish(database, incident, UNCLEAR_TEXT)
    first_run = save_run(database, report_id)
    other = publish(database, incident, UNCLEAR_TEXT + " Other.", 1)
    save_run(database, other, minutes=1)
    assert queue_ids(client, incident) == [report_id, other]

    made = decide(client, report_id, "first_hand", "Phoned the clinic; the nurse saw her.")
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["run_id"] == first_run and body["on_shown_run"] is True
    assert body["decision"] == "first_hand" and body["sequence"] == 1
    assert queue_ids(client, incident) == [other]

    # a newer run (new content fingerprint) is a result nobody has looked at
    newer_run = save_run(database, report_id, minutes=50)
    waiting = client.get(f"/api/incidents/{incident}/reviews").json()["items"]
    assert [i["report_id"] for i in waiting] == [report_id, other]  # the older report first
    earlier = waiting[0]["earlier_review"]
    assert earlier["id"] == body["id"] and earlier["on_shown_run"] is False
    # the person's decision stays current until a person records another
    card = client.get(f"/api/reports/{report_id}/investigation").json()
    assert card["review"]["id"] == body["id"] and card["review"]["on_shown_run"] is False
    with database.sessions() as s:
        current = latest_review(s, report_id)
        assert current is not None and current.run_id == first_run

    again = decide(client, report_id, "not_reliable", "The nurse took it back.")
    assert again.status_code == 201 and again.json()["run_id"] == newer_run
    assert queue_ids(client, incident) == [other]


# --- decisions --------------------------------------------------------------------------


def test_decisions_are_appended_and_the_latest_supersedes(
    database: Database, incident: str, client: TestClient
) -> None:
    report_id = publish(database, incident, UNCLEAR_TEXT)
    save_run(database, report_id)
    with database.sessions() as s:
        assert latest_review(s, report_id) is None
    first = decide(client, report_id, "relay_confirmed", "The camp confirmed it.").json()
    second = decide(client, report_id, "first_hand", "Spoke to the writer.").json()
    assert (first["sequence"], second["sequence"]) == (1, 2)

    with database.sessions() as s:
        current = latest_review(s, report_id)
        assert current is not None
        assert (current.id, current.decision) == (second["id"], ReviewValue.FIRST_HAND)
        assert current.note == "Spoke to the writer." and current.decided_at is not None
    history = client.get(f"/api/reports/{report_id}/reviews").json()
    assert [h["id"] for h in history["items"]] == [second["id"], first["id"]]
    assert history["total"] == 2
    assert [h["decision"] for h in history["items"]] == ["first_hand", "relay_confirmed"]
    assert (
        client.get(f"/api/reports/{report_id}/reviews", params={"limit": 1}).json()["items"]
        == history["items"][:1]
    )
    card = client.get(f"/api/reports/{report_id}/investigation").json()
    assert card["review"]["decision"] == "first_hand"
    assert "first-hand" in card["review"]["decision_meaning"]
    assert client.get("/api/reports/rep_nope/reviews").status_code == 404


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"decision": "probably_fine", "note": "x"}, "decision"),
        ({"decision": "FIRST_HAND", "note": "x"}, "decision"),
        ({"decision": "first_hand"}, "note"),
        ({"decision": "first_hand", "note": "   "}, "note"),
        ({"decision": "first_hand", "note": "x" * 2001}, "note"),
        ({"decision": "first_hand", "note": "seen\x00"}, "note"),
        ({"note": "x"}, "decision"),
        ({"decision": "first_hand", "note": "x", "by": "model"}, "by"),
    ],
)
def test_a_bad_decision_is_a_typed_422_and_writes_nothing(
    database: Database, incident: str, client: TestClient, payload: dict[str, Any], field: str
) -> None:
    report_id = publish(database, incident, UNCLEAR_TEXT)
    save_run(database, report_id)
    refused = client.post(f"/api/reports/{report_id}/review", json=payload)
    assert refused.status_code == 422
    body = refused.json()
    # a control character is one of Trace's own text rules, like a report's
    assert body["code"] == (
        "invalid_report" if "\x00" in payload.get("note", "") else "invalid_body"
    )
    assert [e["loc"][-1] for e in body["errors"]] == [field]
    assert field in body["detail"]
    assert decision_count(database) == 0
    assert queue_ids(client, incident) == [report_id]


def test_only_a_needs_review_result_of_a_known_report_can_be_decided(
    database: Database, incident: str, client: TestClient
) -> None:
    missing = decide(client, "rep_does_not_exist", "first_hand")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    unchecked = publish(database, incident, UNCLEAR_TEXT)
    nothing = decide(client, unchecked, "first_hand")
    assert nothing.status_code == 409 and nothing.json()["code"] == "not_awaiting_review"
    completed = publish(database, incident, FIRST_HAND_TEXT, 1)
    save_run(database, completed, status="COMPLETED", attribution="DIRECT")
    refused = decide(client, completed, "first_hand")
    assert refused.status_code == 409 and "COMPLETED" in refused.json()["detail"]
    assert decision_count(database) == 0


def test_the_domain_refuses_without_writing(database: Database, incident: str) -> None:
    report_id = publish(database, incident, UNCLEAR_TEXT)
    with database.sessions() as s, pytest.raises(ReviewRefusedError):
        review_queue.decide(
            s, report_id, ReviewValue.NOT_RELIABLE, "no run yet", actor=TEST_OPERATOR
        )
    save_run(database, report_id)
    with database.sessions() as s, pytest.raises(InvalidInputError):
        review_queue.decide(s, report_id, ReviewValue.NOT_RELIABLE, " \n ", actor=TEST_OPERATOR)
    with database.sessions() as s, pytest.raises(NotFoundError):
        review_queue.decide(s, "rep_nope", ReviewValue.NOT_RELIABLE, "note", actor=TEST_OPERATOR)
    with pytest.raises(InvalidInputError):
        reviews.parse_value("unsure")
    assert decision_count(database) == 0
    with database.sessions() as s:
        row = review_queue.decide(
            s, report_id, ReviewValue.NOT_RELIABLE, "  rumour  ", actor=TEST_OPERATOR
        )
        assert row.note == "rumour" and row.sequence == 1
    assert decision_count(database) == 1


def test_a_decision_never_changes_the_saved_run(
    database: Database, incident: str, client: TestClient
) -> None:
    lowered = publish(database, incident, HEARSAY_TEXT)
    run_id = save_run(
        database, lowered, status="COMPLETED", attribution="DIRECT", reason="saved reason"
    )
    before = saved_columns(run_row(database, run_id))
    assert decide(client, lowered, "not_reliable", "Rumour only.").status_code == 201
    assert decide(client, lowered, "first_hand", "Writer phoned back.").status_code == 201
    client.get(f"/api/incidents/{incident}/reviews")
    client.get(f"/api/reports/{lowered}/investigation")
    client.get(f"/reports/{lowered}")
    row = run_row(database, run_id)
    assert saved_columns(row) == before
    # the saved columns still say what was saved; the decision beside them is today's
    assert (row["status"], row["reason"]) == ("COMPLETED", "saved reason")
    assert row["decided_status"] == "NEEDS_REVIEW" and "'They say'" in row["decided_reason"]
    assert not row["awaiting_review"]  # a person decided on it
    with database.sessions() as s:
        assert s.scalar(select(func.count()).select_from(InvestigationRun)) == 1


# --- pages ------------------------------------------------------------------------------


def test_reviews_page_form_records_a_decision_with_post_redirect_get(
    database: Database, incident: str, client: TestClient
) -> None:
    report_id = publish(database, incident, HEARSAY_TEXT)
    save_run(database, report_id, status="COMPLETED", attribution="DIRECT")
    page = client.get(f"/incidents/{incident}/reviews")
    assert page.status_code == 200
    assert f'id="review-{report_id}"' in page.text
    assert f'href="/incidents/{incident}/reviews"' in page.text  # the header links it
    assert 'data-status="NEEDS_REVIEW"' in page.text and 'data-kind="hearsay"' in page.text
    token = csrf(client)
    form = {"decision": "not_reliable", "note": "Only a rumour.", "back": "reviews"}
    assert client.post(f"/reports/{report_id}/review", data=form).status_code == 403

    bad = client.post(
        f"/reports/{report_id}/review", data={**form, "decision": "maybe", "csrf_token": token}
    )
    assert bad.status_code == 422
    assert "Choose a decision" in bad.text and "Only a rumour." in bad.text
    assert decision_count(database) == 0

    done = client.post(f"/reports/{report_id}/review", data={**form, "csrf_token": token})
    assert done.status_code == 303
    assert done.headers["location"] == f"/incidents/{incident}/reviews?decided={report_id}"
    after = client.get(done.headers["location"])
    assert 'id="review-recorded"' in after.text and f'id="review-{report_id}"' not in after.text
    assert 'id="queue-empty"' in after.text
    shown = client.get(f"/reports/{report_id}").text
    assert 'data-decision="not_reliable"' in shown and "Only a rumour." in shown

    # the report page's own form supersedes it and returns to the report
    again = client.post(
        f"/reports/{report_id}/review",
        data={"decision": "first_hand", "note": "Met her.", "back": "report", "csrf_token": token},
    )
    assert again.status_code == 303
    assert again.headers["location"].startswith(f"/reports/{report_id}?reviewed=1")
    assert 'data-decision="first_hand"' in client.get(f"/reports/{report_id}").text
    assert decision_count(database) == 2


def test_reviews_page_refusals(database: Database, incident: str, client: TestClient) -> None:
    assert client.get("/incidents/inc_nope/reviews").status_code == 404
    assert client.get(f"/incidents/{incident}/reviews?page=0").status_code == 422
    client.get(f"/incidents/{incident}/reviews")
    token = csrf(client)
    data = {"decision": "first_hand", "note": "x", "csrf_token": token}
    assert client.post("/reports/rep_nope/review", data=data).status_code == 404
    unchecked = publish(database, incident, UNCLEAR_TEXT)
    assert client.post(f"/reports/{unchecked}/review", data=data).status_code == 409


def test_a_refused_form_on_a_later_page_shows_that_page_again(
    database: Database, incident: str, client: TestClient
) -> None:
    reports = [publish(database, incident, f"{UNCLEAR_TEXT} No {n}.", n) for n in range(21)]
    for n, report_id in enumerate(reports):
        save_run(database, report_id, minutes=n)
    second = client.get(f"/incidents/{incident}/reviews?page=2")
    assert f'id="review-{reports[20]}"' in second.text
    assert f'id="review-{reports[0]}"' not in second.text
    token = csrf(client)
    refused = client.post(
        f"/reports/{reports[20]}/review",
        data={"decision": "first_hand", "note": " ", "back": "reviews", "page": "2"},
        headers={"X-CSRF-Token": token or ""},
    )
    assert refused.status_code == 422
    assert f'id="review-error-{reports[20]}"' in refused.text
    assert "Write a note" in refused.text
    for page in ("9" * 5000, "x", "-1"):  # never a server error: page 1 instead
        again = client.post(
            f"/reports/{reports[20]}/review",
            data={"decision": "first_hand", "note": " ", "back": "reviews", "page": page},
            headers={"X-CSRF-Token": token or ""},
        )
        assert again.status_code == 422 and f'id="review-{reports[0]}"' in again.text
    assert decision_count(database) == 0
