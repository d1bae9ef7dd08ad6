"""The Import and Export pages (issue 23, item 4): upload, dry-run preview, confirm
without a second upload, the upload bound to its browser session, streamed exports with
their audit rows, and the links only coordinators see."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from accounts_helpers import client_for, csrf, signed_in
from sqlalchemy import func, select

from trace_app.store.account_models import AuditEvent
from trace_app.store.models import Person

from .conftest import FIXTURES

# A shelter list written for these tests: line 3 has no name; Maya Gurung is in the demo.
CAMP_LIST = (
    "full_name,age,status,last_known_location\n"
    "Pema Dolkar,52,safe,Hill School Camp\n"
    ",8,safe,Hill School Camp\n"
    "Maya Gurung,24,safe,Hill School Camp\n"
    "=cmd|' /C calc'!A0,40,safe,Hill School Camp\n"
)


def audit_actions(web: Any) -> list[str]:
    with web.app.state.db.sessions() as s:
        return list(s.scalars(select(AuditEvent.action).order_by(AuditEvent.sequence)))


def people_count(web: Any, incident_id: str) -> int:
    with web.app.state.db.sessions() as s:
        found = s.scalar(
            select(func.count()).select_from(Person).where(Person.incident_id == incident_id)
        )
        return int(found or 0)


def upload(client: Any, incident_id: str, data: bytes, **fields: str) -> Any:
    form = {
        "csrf_token": csrf(client),
        "incident_id": incident_id,
        "kind": "csv",
        "source_name": "Hill School Camp Desk",
        **fields,
    }
    name = "camp.xml" if fields.get("kind") == "pfif" else "camp.csv"
    return client.post("/import", data=form, files={"file": (name, data, "text/csv")})


def test_upload_preview_then_confirm_imports_what_the_preview_said(
    web: Any, incident_id: str
) -> None:
    before = people_count(web, incident_id)
    actions = audit_actions(web)
    sent = upload(web, incident_id, CAMP_LIST.encode())
    assert sent.status_code == 303, sent.text
    preview_url = sent.headers["location"]
    assert re.fullmatch(r"/import/[A-Za-z0-9_-]{32}", preview_url)
    assert people_count(web, incident_id) == before  # a dry run keeps nothing
    assert audit_actions(web) == [*actions, "import.preview"]

    page = web.get(preview_url)
    assert page.status_code == 200
    counts = dict(re.findall(r'id="count-([a-z-]+)">(\d+)<', page.text))
    assert counts == {
        "people-added": "2",
        "people-matched": "1",
        "notes-added": "3",
        "skipped": "0",
        "invalid": "1",
    }
    assert "Line 3:" in page.text  # the problem by its line
    assert "Maya Gurung" in page.text  # attached to the demo's Maya Gurung: for a person to look at

    confirmed = web.post(f"{preview_url}/confirm", data={"csrf_token": csrf(web)})
    assert confirmed.status_code == 303
    assert people_count(web, incident_id) == before + 2
    assert audit_actions(web)[-1] == "csv.import"
    done = web.get(preview_url)
    assert "Imported." in done.text and "2 people added" in done.text
    # confirming again does not import twice
    again = web.post(f"{preview_url}/confirm", data={"csrf_token": csrf(web)})
    assert again.status_code == 303 and people_count(web, incident_id) == before + 2


def test_a_changed_incident_gets_a_new_preview_not_an_import(web: Any, incident_id: str) -> None:
    first = upload(web, incident_id, CAMP_LIST.encode()).headers["location"]
    second = upload(web, incident_id, CAMP_LIST.encode()).headers["location"]
    assert web.post(f"{first}/confirm", data={"csrf_token": csrf(web)}).status_code == 303
    after_first = people_count(web, incident_id)
    changed = web.post(f"{second}/confirm", data={"csrf_token": csrf(web)})
    assert changed.status_code == 303
    assert people_count(web, incident_id) == after_first
    page = web.get(second).text
    assert 'id="import-changed"' in page and 'id="count-people-added">0<' in page


def test_pfif_upload_and_refusals(web: Any, incident_id: str) -> None:
    document = (FIXTURES / "registry-1.4.xml").read_bytes()
    sent = upload(web, incident_id, document, kind="pfif", source_name="")
    assert sent.status_code == 303
    assert 'id="count-people-added">' in web.get(sent.headers["location"]).text
    not_xml = upload(web, incident_id, b"<not pfif", kind="pfif")
    assert not_xml.status_code == 422 and "Nothing can be imported" in not_xml.text
    no_source = upload(web, incident_id, CAMP_LIST.encode(), source_name=" ")
    assert no_source.status_code == 422 and "Name the organisation" in no_source.text
    unknown_kind = upload(web, incident_id, CAMP_LIST.encode(), kind="xlsx")
    assert unknown_kind.status_code == 422
    empty = upload(web, incident_id, b"")
    assert empty.status_code == 422
    forged = upload(web, incident_id, CAMP_LIST.encode(), csrf_token="not-the-token")
    assert forged.status_code == 403
    assert web.get("/import/" + "A" * 32).status_code == 404
    assert web.get("/import/..%2F..%2Fetc").status_code == 404


def test_an_upload_is_bound_to_its_browser_session(web: Any, incident_id: str) -> None:
    preview_url = upload(web, incident_id, CAMP_LIST.encode()).headers["location"]
    with signed_in(web.app) as other_admin:  # another account (and session)
        assert other_admin.get(preview_url).status_code == 404
        refused = other_admin.post(f"{preview_url}/confirm", data={"csrf_token": csrf(other_admin)})
        assert refused.status_code == 404
    assert web.get(preview_url).status_code == 200


def test_exports_stream_and_are_audited(web: Any, incident_id: str) -> None:
    page = web.get(f"/export?incident_id={incident_id}")
    assert page.status_code == 200 and "Flood Relief Demo" in page.text
    upload_url = upload(web, incident_id, CAMP_LIST.encode()).headers["location"]
    web.post(f"{upload_url}/confirm", data={"csrf_token": csrf(web)})
    actions = audit_actions(web)
    people = web.get("/export/file", params={"incident_id": incident_id, "format": "people-csv"})
    assert people.status_code == 200 and people.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(people.content.decode("utf-8-sig"))))
    by_name = {row["full_name"]: row for row in rows}
    assert by_name["Maya Gurung"]["status"] == "safe"
    assert by_name["Maya Gurung"]["status_source"] == "Hill School Camp Desk"
    assert by_name["Pema Dolkar"]["status_location"] == "Hill School Camp"
    assert "'=cmd|' /C calc'!A0" in by_name  # a formula is neutralised
    assert {row["open_alert"] for row in rows} <= {"yes", "no"}
    pfif = web.get("/export/file", params={"incident_id": incident_id, "format": "pfif-1.3"})
    assert pfif.status_code == 200 and b"http://zesty.ca/pfif/1.3" in pfif.content
    api = web.get(f"/api/incidents/{incident_id}/people.csv")
    assert api.status_code == 200 and api.content == people.content
    assert audit_actions(web) == [*actions, "people.export", "pfif.export", "people.export"]
    assert web.get("/export/file", params={"incident_id": incident_id}).status_code == 422
    missing = web.get("/export/file", params={"incident_id": "inc_nope", "format": "pfif-1.4"})
    assert missing.status_code in (403, 404)
    assert web.get("/api/incidents/inc_nope/people.csv").status_code in (403, 404)
    assert audit_actions(web)[-1] == "people.export"  # a refusal is not an export


def test_only_coordinators_see_import_and_export(web: Any, incident_id: str) -> None:
    assert 'id="nav-import"' in web.get("/").text  # an admin
    for role, sees in (("viewer", False), ("reviewer", False), ("coordinator", True)):
        with signed_in(web.app, role=role, organization="Some Camp") as client:
            home = client.get("/").text
            assert ('id="nav-import"' in home) is sees, role
            assert ('id="nav-export"' in home) is sees, role
            assert (client.get("/import").status_code == 200) is sees, role
    assert client_for(web.app).get("/import").status_code == 303  # to the login page


def test_an_upload_over_the_limit_is_refused_and_not_kept(sqlite_settings: Any) -> None:
    import dataclasses

    from trace_app.web.app import create_app

    settings = dataclasses.replace(sqlite_settings, pfif_max_bytes=2048)
    app = create_app(settings)
    with signed_in(app) as client:
        incident = client.get("/api/incidents").json()["items"][0]["id"]
        small = upload(client, incident, CAMP_LIST.encode())
        assert small.status_code == 303
        rows = "".join(f"Person Number {i},30,safe,Camp\n" for i in range(200))
        big = upload(
            client, incident, ("full_name,age,status,last_known_location\n" + rows).encode()
        )
        assert big.status_code == 413
    kept = sorted(p.suffix for p in (settings.home / "pending-imports").iterdir())
    assert kept == [".json", ".upload"]  # the small one only
    app.state.db.dispose()
