"""One status per person, the linked group's (issue 40, item 1; ADR 0160), told the way
the issue found it wrong: a record reported missing, another reported safe later, then
decided "same person"."""

from __future__ import annotations

import csv
import io
from typing import Any
from urllib.parse import quote

import pytest
from test_alert_groups_property import NAMES, Decided, Event, Said
from test_group_status_property import publish

from trace_app.domain import search
from trace_app.domain.people_csv_export import export_file_names
from trace_app.store.models import ClaimStatus, LinkDecision

INCIDENT = "Koshi/Flood: 2026 बाढी"


def test_missing_then_safe_decided_same_is_safe_everywhere(
    web: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[Event] = [
        Said(0, ClaimStatus.MISSING, 0, "Police Prop"),
        Said(1, ClaimStatus.SAFE, 60, "Camp Prop"),
        Decided((0, 1), LinkDecision.SAME),
        # a second group, its newest claim older than the first group's: each group's own
        Said(2, ClaimStatus.DECEASED, 5, "Police Prop"),
        Said(3, ClaimStatus.SEEN, 10, "Relay Prop"),
        Decided((2, 3), LinkDecision.SAME),
    ]
    incident_id, ids = publish(web.app, events, name=INCIDENT)
    people = f"/api/incidents/{incident_id}/people"
    assert web.get(people, params={"status": "missing"}).json()["items"] == []
    [found] = web.get(people, params={"status": "safe"}).json()["items"]
    assert found["id"] == min(ids[0], ids[1]) and found["group_status"]["status"] == "safe"
    [seen] = web.get(people, params={"status": "seen"}).json()["items"]
    assert seen["id"] == min(ids[2], ids[3]) and seen["group_status"]["status"] == "seen"
    assert web.get(people, params={"status": "deceased"}).json()["items"] == []
    assert web.get(people, params={"alert": "open"}).json()["items"] == []
    assert [p["id"] for p in web.get(people, params={"alert": "closed"}).json()["items"]] == [
        found["id"]
    ]
    # the page: the group's status first, each report below as detail
    page = web.get(f"/incidents/{incident_id}/people").text
    status_line = page.split(f'id="status-{found["id"]}"', 1)[1].split("</p>", 1)[0]
    assert 'data-code="safe"' in status_line and "Camp Prop" in status_line

    response = web.get(f"{people}.csv")
    expected_name, written = export_file_names(INCIDENT, "people.csv")
    assert expected_name == "trace-Koshi-Flood-2026-badhi.people.csv"
    disposition = response.headers["content-disposition"]
    assert f'filename="{expected_name}"' in disposition
    assert f"filename*=UTF-8''{quote(written)}" in disposition and "/" not in written
    rows = {r["full_name"]: r for r in csv.DictReader(io.StringIO(response.text.lstrip("\ufeff")))}
    missing, safe = rows[NAMES[0]], rows[NAMES[1]]
    assert missing["group_status"] == safe["group_status"] == "safe"
    assert (missing["status"], safe["status"]) == ("missing", "safe")  # each record's own
    assert missing["group_record_id"] == safe["group_record_id"]
    assert rows[NAMES[2]]["group_record_id"] != safe["group_record_id"]
    assert missing["open_alert"] == safe["open_alert"] == "no"
    pfif = web.get(f"/api/incidents/{incident_id}/pfif").text
    assert pfif.count("the latest about this person and its linked records says safe") == 2

    # the People page says how many match in all when the search is bounded
    real = search.search_results

    def bounded(*args: Any, **kwargs: Any) -> search.SearchResults:
        return search.SearchResults(real(*args, **kwargs).matches, 2_345, at_least=True)

    monkeypatch.setattr(search, "search_results", bounded)
    page = web.get(f"/incidents/{incident_id}/people", params={"q": "prop"}).text
    said = page.split('id="search-result">', 1)[1].split("</p>", 1)[0]
    assert said.startswith("2,345 or more people match; showing the best 2,"), said


@pytest.mark.parametrize(
    ("name", "plain", "written"),
    [
        ("Flood Relief Demo", "trace-Flood-Relief-Demo.csv", "trace-Flood-Relief-Demo.csv"),
        ("../etc/passwd", "trace-etc-passwd.csv", "trace-etc-passwd.csv"),
        ('a<b>:"c"|?*\\d', "trace-a-b-c-d.csv", "trace-a-b-c-d.csv"),
        ("सुनिता", "trace-sunita.csv", "trace-सुनिता.csv"),
        ("...", "trace-incident.csv", "trace-incident.csv"),
    ],
)
def test_export_file_names_are_safe(name: str, plain: str, written: str) -> None:
    assert export_file_names(name, "csv") == (plain, written)
