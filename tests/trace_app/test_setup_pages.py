"""Setting up an incident without a terminal (issue 40, item 8): the New incident and
Members pages use the API's rules and show a refused value beside its field; the Audit
page speaks in names; the menu is the same on every page; an incident's organisation
filter lists its own organisations; a shelter list's contact column is refused."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from accounts_helpers import csrf, make_user, signed_in
from fastapi.testclient import TestClient

from trace_app.interchange.shelter_csv import CsvError, human_size, read_shelter_csv
from trace_app.web.app import create_app


def _incident_id(client: TestClient) -> str:
    found: str = client.get("/api/incidents").json()["items"][0]["id"]
    return found


def _field_error(html: str, field: str) -> str:
    found = re.search(rf'<p class="field-error" id="{field}-error">([^<]*)</p>', html)
    assert found, f"no error beside {field}"
    return found.group(1)


def test_an_admin_opens_an_incident_from_a_list_of_zones(web: Any) -> None:
    form = web.get("/incidents/new").text
    assert '<option value="Asia/Kathmandu">Kathmandu (Asia)</option>' in form
    assert 'id="new-incident"' in web.get("/").text  # the Incidents page links to it
    sent = web.post(
        "/incidents/new",
        data={"name": "Ridge Landslide", "time_zone": "Asia/Kathmandu", "csrf_token": csrf(web)},
    )
    assert sent.status_code == 303
    assert sent.headers["location"].endswith("/members?created=1")
    made = next(
        i for i in web.get("/api/incidents").json()["items"] if i["name"] == "Ridge Landslide"
    )
    assert made["time_zone"] == "Asia/Kathmandu"
    members = web.get(sent.headers["location"]).text
    assert "The incident is open" in members and "Ridge Landslide" in members


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        ({"name": "Ridge", "time_zone": "Mars/Olympus"}, "time_zone", "not a time zone"),
        ({"name": "  ", "time_zone": "UTC"}, "name", "Give the incident a name"),
        ({"name": "flood relief demo", "time_zone": "UTC"}, "name", "already exists"),
    ],
)
def test_a_bad_value_is_shown_beside_its_field(
    web: Any, values: dict[str, str], field: str, words: str
) -> None:
    before = len(web.get("/api/incidents").json()["items"])
    refused = web.post("/incidents/new", data={**values, "csrf_token": csrf(web)})
    assert refused.status_code == 422
    assert words in _field_error(refused.text, field)
    assert 'aria-invalid="true"' in refused.text
    assert len(web.get("/api/incidents").json()["items"]) == before


def test_a_bad_time_zone_on_the_people_page_stays_on_a_form(web: Any) -> None:
    incident_id = _incident_id(web)
    refused = web.post(
        f"/incidents/{incident_id}/time-zone",
        data={"time_zone": "Not/AZone", "csrf_token": csrf(web)},
    )
    assert refused.status_code == 422
    assert "not a time zone" in _field_error(refused.text, "time_zone")
    assert "<select" in refused.text  # the list to choose from, not the error page


def test_a_coordinator_manages_members_within_their_own_role(sqlite_settings: Any) -> None:
    app = create_app(sqlite_settings)
    make_user(app.state.db, "field-worker", "viewer", "Camp 9 Desk")
    make_user(app.state.db, "big-admin", "admin", None)
    with signed_in(app) as admin:
        incident_id = _incident_id(admin)
    with signed_in(app, role="coordinator", incident_id=incident_id) as coordinator:
        page = coordinator.get(f"/incidents/{incident_id}/members").text
        assert '<option value="admin"' not in page  # no role above their own
        assert '<option value="coordinator"' in page

        def give(user: str, role: str, organization: str = "") -> Any:
            data = {"user": user, "role": role, "organization": organization}
            return coordinator.post(
                f"/incidents/{incident_id}/members", data={**data, "csrf_token": csrf(coordinator)}
            )

        given = give("field-worker", "reviewer")
        assert given.status_code == 303
        listed = coordinator.get(f"/api/incidents/{incident_id}/members").json()["items"]
        mine = [m for m in listed if m["user"] == "field-worker" and m["scope"] == incident_id]
        assert [m["role"] for m in mine] == ["reviewer"]

        above = give("field-worker", "admin")
        assert above.status_code == 403  # not offered; typed anyway, refused by the API's rule
        assert "up to your own" in _field_error(above.text, "role")
        holder = give("big-admin", "viewer")
        assert holder.status_code == 403
        assert "above yours" in _field_error(holder.text, "user")
        unknown = give("nobody-at-all", "viewer")
        assert unknown.status_code == 404
        assert "No user named" in _field_error(unknown.text, "user")
        reporter = give("field-worker", "reporter")
        assert reporter.status_code == 422
        assert "organisation" in _field_error(reporter.text, "organization").lower()

        removed = coordinator.post(
            f"/incidents/{incident_id}/members/field-worker/remove",
            data={"csrf_token": csrf(coordinator)},
        )
        assert removed.status_code == 303
        left = coordinator.get(f"/api/incidents/{incident_id}/members").json()["items"]
        assert not any(m["user"] == "field-worker" and m["scope"] == incident_id for m in left)
    app.state.db.dispose()


def test_the_audit_page_names_things_and_folds_the_codes(web: Any) -> None:
    incident_id = _incident_id(web)
    page = web.get("/audit").text
    assert "reset the demo" in page
    assert f'<a href="/incidents/{incident_id}/people">Flood Relief Demo</a>' in page
    assert '<details class="technical audit-details">' in page  # the JSON, folded
    # the menu keeps the incident's People, Reports and Reviews on the Audit page
    assert f'href="/incidents/{incident_id}/reviews"' in page


def test_the_menu_is_the_same_on_an_error_page(web: Any) -> None:
    incident_id = _incident_id(web)
    missing = web.get("/reports/rep_does_not_exist")
    assert missing.status_code == 404
    assert f'href="/incidents/{incident_id}/people"' in missing.text
    assert '<details class="menu" id="menu">' in missing.text


def _filter_options(html: str) -> set[str]:
    block = html.split('id="search-organization"', 1)[1].split("</select>", 1)[0]
    return set(re.findall(r"<option(?: selected)?>([^<]*)</option>", block))


def test_the_organisation_filter_lists_the_incidents_own(web: Any) -> None:
    from trace_app.domain.organizations import working_in
    from trace_app.domain.queries import list_organizations

    demo_id = _incident_id(web)
    new = web.post("/api/incidents", json={"name": "Quiet Valley", "time_zone": "UTC"}).json()
    with web.app.state.db.sessions() as session:
        every = {o.name for o in list_organizations(session)}
        quiet = set(working_in(session, new["id"]))
    assert _filter_options(web.get(f"/incidents/{new['id']}/people").text) == quiet
    assert quiet < every  # the demo's reporting organisations are not offered there
    assert _filter_options(web.get(f"/incidents/{demo_id}/people").text) == every


def test_a_contact_column_is_refused_with_words_not_dropped() -> None:
    data = b"full_name,age,phone\nAsha Rai,30,+977 1 555 0100\n"
    with pytest.raises(CsvError, match=r"contact column \(phone\)"):
        read_shelter_csv(io.BytesIO(data), source_name="Camp", domain="t.example", max_bytes=1000)


def test_sizes_read_as_people_say_them() -> None:
    assert [human_size(n) for n in (95, 1536, 64 * 1024 * 1024)] == ["95 B", "1.5 kB", "64 MB"]


def test_an_upload_with_a_phone_column_is_refused_beside_the_file(web: Any) -> None:
    form = {
        "csrf_token": csrf(web),
        "incident_id": _incident_id(web),
        "kind": "csv",
        "source_name": "Camp 4 Desk",
    }
    data = b"full_name,age,phone\nAsha Rai,30,+977 1 555 0100\n"
    refused = web.post("/import", data=form, files={"file": ("camp.csv", data)})
    assert refused.status_code == 422
    assert "contact column (phone)" in _field_error(refused.text, "file")
    assert "64 MB" in refused.text  # the size limit, as people say it
    unnamed = web.post(
        "/import", data={**form, "source_name": ""}, files={"file": ("camp.csv", data)}
    )
    assert "Name the organisation" in _field_error(unnamed.text, "source_name")


def test_the_account_page_names_its_incidents(sqlite_settings: Any) -> None:
    app = create_app(sqlite_settings)
    with signed_in(app) as admin:
        incident_id = _incident_id(admin)
    with signed_in(app, role="reviewer", incident_id=incident_id) as reviewer:
        page = reviewer.get("/account").text
        assert f'<a href="/incidents/{incident_id}/people">Flood Relief Demo</a>' in page
        wrong = reviewer.post(
            "/account/password",
            data={"current": "x", "new": "a" * 12, "again": "b" * 12, "csrf_token": csrf(reviewer)},
        )
        assert wrong.status_code == 422 and "differ" in wrong.text
    app.state.db.dispose()
