"""A deployment is not the demo: plain ``trace serve`` never seeds and never resets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from accounts_helpers import (
    PASSWORD,
    client_for,
    csrf,
    make_user,
    sign_in,
    signed_in,
    signed_in_with,
)
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from trace_app.demo import seed
from trace_app.settings import TraceSettings
from trace_app.web.app import create_app

REFUSED = "Reset demo is switched off: this server is not a demo"


def deployment_settings(tmp_path: Path) -> TraceSettings:
    home = tmp_path / "deploy"
    return TraceSettings(home=home, database_url=f"sqlite:///{home / 'trace.db'}")


def token(client: TestClient) -> str:
    client.get("/")
    value: str = csrf(client)
    return value


def test_deployment_starts_empty_and_shows_no_reset(tmp_path: Path) -> None:
    with signed_in_with(create_app(deployment_settings(tmp_path)), follow_redirects=True) as web:
        assert web.get("/api/incidents").json() == {"items": []}
        home = web.get("/").text
        assert "No incident yet" in home
        assert "Reset demo" not in home and 'action="/demo/reset"' not in home


def test_deployment_refuses_reset_and_keeps_data(tmp_path: Path) -> None:
    settings = deployment_settings(tmp_path)
    app = create_app(settings)
    with app.state.db.session() as session:
        seed.reset_demo(session)  # data that a reset would wipe
    with signed_in(app) as web:  # an admin: demo:reset, yet not on a deployment
        before = web.get("/api/incidents").json()["items"]
        api = web.post("/api/demo/reset", json={})
        assert api.status_code == 403
        assert api.json()["code"] == "demo_only"
        assert REFUSED in api.json()["detail"]
        page = web.post("/demo/reset", data={"csrf_token": token(web)})
        assert page.status_code == 403 and REFUSED in page.text
        assert web.get("/api/incidents").json()["items"] == before


def test_demo_server_seeds_and_offers_reset(sqlite_settings: TraceSettings) -> None:
    assert sqlite_settings.demo
    with signed_in_with(create_app(sqlite_settings), follow_redirects=True) as web:
        names = [i["name"] for i in web.get("/api/incidents").json()["items"]]
        assert names == ["Flood Relief Demo"]
        assert 'href="/demo/reset"' in web.get("/").text  # a link to a page that asks first
        assert 'action="/demo/reset"' in web.get("/demo/reset").text
        assert web.post("/api/demo/reset", json={}).status_code == 200


@pytest.mark.parametrize(("args", "demo"), [(["serve"], False), (["serve", "--demo"], True)])
def test_serve_is_a_deployment_unless_told_demo(
    args: list[str], demo: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from trace_app.cli import app as cli

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda web_app, **_kw: served.append(web_app))
    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("TRACE_DEMO", raising=False)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    (web_app,) = served
    assert web_app.state.settings.demo is demo
    if demo:  # one demo account per role, its password printed for this run only
        assert "No accounts yet" not in result.output
        password = re.search(r"demo-admin\s+(\S+)\s+\(admin", result.output)
        assert password is not None, result.output
        name, secret = "demo-admin", password.group(1)
    else:  # a deployment has no account at all until the operator makes one
        assert "No accounts yet" in result.output and "demo-admin" not in result.output
        name, secret = "first-admin", PASSWORD
        make_user(web_app.state.db, name, "admin")
    with client_for(web_app, follow_redirects=True) as web:
        assert sign_in(web, name, secret).status_code == 303
        incidents = web.get("/api/incidents").json()["items"]
        assert bool(incidents) is demo
