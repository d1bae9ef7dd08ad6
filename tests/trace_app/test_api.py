"""The JSON API contract (docs/trace.md)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

MESSAGE = "Enter a summary and the original report text."


def body(incident_id: str, **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "incident_id": incident_id,
        "source": "Central Hospital Demo",
        "summary": "Maya Gurung admitted.",
        "original_text": "Admission note: Maya Gurung, 24, admitted, stable.",
        "reported_at": "2026-07-15T07:30:00Z",
        "references": ["CH-1"],
        "person": {"name": "Maya Gurung", "age": 24},
        "status": "admitted",
        "location": "Emergency ward",
    }
    data.update(overrides)
    return data


def test_publish_then_read_back(web: TestClient, incident_id: str) -> None:
    created = web.post("/api/reports", json=body(incident_id))
    assert created.status_code == 201, created.text
    report = created.json()
    assert isinstance(report["id"], str) and report["id"]
    assert report["source"] == "Central Hospital Demo"
    assert report["reported_at"].startswith("2026-07-15T07:30:00")
    assert report["person"]["name"] == "Maya Gurung" and report["claim_id"]
    fetched = web.get(f"/api/reports/{report['id']}").json()
    assert fetched == report
    listed = web.get(f"/api/incidents/{incident_id}/reports", params={"limit": 500}).json()
    assert report["id"] in [r["id"] for r in listed["items"]]
    assert listed["total"] == len(listed["items"])


def test_people_show_claims_with_sources(web: TestClient, incident_id: str) -> None:
    web.post("/api/reports", json=body(incident_id))
    page = web.get(f"/api/incidents/{incident_id}/people", params={"limit": 500}).json()
    assert page["total"] >= 20
    maya = next(p for p in page["items"] if p["name"] == "Maya Gurung")
    sources = [c["source"] for c in maya["claims"]]
    assert sources == [
        "Nepal Police Demo",
        "Bhote Koshi Youth Network Demo",
        "Central Hospital Demo",
    ]
    assert [c["status"] for c in maya["claims"]] == ["missing", "missing", "admitted"]


def test_people_paging(web: TestClient, incident_id: str) -> None:
    first = web.get(f"/api/incidents/{incident_id}/people", params={"limit": 10}).json()
    second = web.get(
        f"/api/incidents/{incident_id}/people", params={"limit": 10, "offset": 10}
    ).json()
    assert len(first["items"]) == 10 and first["offset"] == 0
    assert {p["id"] for p in first["items"]}.isdisjoint({p["id"] for p in second["items"]})


def test_missing_claim_raises_alert(web: TestClient, incident_id: str) -> None:
    before = web.get(f"/api/incidents/{incident_id}/alerts").json()["total"]
    web.post("/api/reports", json=body(incident_id, status="missing", person={"name": "New One"}))
    alerts = web.get(f"/api/incidents/{incident_id}/alerts").json()
    assert alerts["total"] == before + 1
    assert alerts["items"][0]["person_name"] == "New One"


def test_empty_summary_or_text_is_422_with_message(web: TestClient, incident_id: str) -> None:
    total = web.get(f"/api/incidents/{incident_id}/reports").json()["total"]
    for override in ({"summary": ""}, {"original_text": "   "}, {"summary": None}):
        data = body(incident_id, **override)
        if override.get("summary", "x") is None:
            del data["summary"]
        response = web.post("/api/reports", json=data)
        assert response.status_code == 422
        answer = response.json()
        assert (answer["detail"], answer["code"]) == (MESSAGE, "empty_report")
    assert web.get(f"/api/incidents/{incident_id}/reports").json()["total"] == total


def test_long_text_accepted(web: TestClient, incident_id: str) -> None:
    response = web.post("/api/reports", json=body(incident_id, original_text="a" * 3500))
    assert response.status_code == 201
    assert len(response.json()["original_text"]) == 3500


def test_bad_fields(web: TestClient, incident_id: str) -> None:
    assert web.post("/api/reports", json=body(incident_id, status="lost")).status_code == 422
    assert web.post("/api/reports", json=body("inc_nope")).status_code == 404
    assert web.post("/api/reports", json=body(incident_id, extra=1)).status_code == 422
    blank = web.post("/api/reports", json=body(incident_id, person={"name": " "}))
    assert blank.status_code == 422 and blank.json()["code"] == "invalid_report"


def test_unknown_ids_are_404(web: TestClient) -> None:
    for url in (
        "/api/reports/rep_nope",
        "/api/incidents/inc_nope/reports",
        "/api/incidents/inc_nope/people",
    ):
        response = web.get(url)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"


def test_reset_endpoint_restores_seed(web: TestClient, incident_id: str) -> None:
    baseline = web.get("/api/incidents").json()["items"][0]
    web.post("/api/reports", json=body(incident_id))
    reset = web.post("/api/demo/reset", json={})
    assert reset.status_code == 200
    out = reset.json()
    assert out["incident_id"] != incident_id
    assert (out["reports"], out["people"], out["open_alerts"]) == (
        baseline["reports"],
        baseline["people"],
        baseline["open_alerts"],
    )
    assert web.get(f"/api/reports/{incident_id}").status_code == 404


def test_openapi_documents_the_contract(web: TestClient) -> None:
    paths = web.get("/openapi.json").json()["paths"]
    for path in (
        "/api/reports",
        "/api/incidents",
        "/api/incidents/{incident_id}/reports",
        "/api/reports/{report_id}",
        "/api/incidents/{incident_id}/people",
        "/api/demo/reset",
    ):
        assert path in paths
