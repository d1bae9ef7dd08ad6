"""The mail server's URL (issue 41): STARTTLS before the password, user and password from
the URL, and a setting that never repeats the password; ``trace worker --once``."""

from __future__ import annotations

import ssl
import subprocess
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from delivery_helpers import (
    free_port,
    make_endpoint,
    make_event,
    make_incident,
    webhook_receiver,
)
from typer.testing import CliRunner

from trace_app.notifications import smtp
from trace_app.notifications.webhooks import SendError
from trace_app.settings import SettingsError, TraceSettings
from trace_app.store.db import Database, make_engine, migrate

SECRET_PASSWORD = "p@ss:w/rd"


def test_smtp_url_is_checked_and_never_shown(tmp_path: Path) -> None:
    env = {"TRACE_HOME": str(tmp_path), "TRACE_SMTP_URL": "smtp://desk:hunter2x@mail:587"}
    settings = TraceSettings.from_env(env)
    assert settings.smtp_url == env["TRACE_SMTP_URL"]
    assert "hunter2x" not in repr(settings)
    for bad in ("http://mail", "smtp://", "smtp://desk:hunter2x@mail:port"):
        with pytest.raises(SettingsError) as refused:
            TraceSettings.from_env({**env, "TRACE_SMTP_URL": bad})
        assert "hunter2x" not in str(refused.value)
    defaults = TraceSettings.from_env({"TRACE_HOME": str(tmp_path)})
    assert (defaults.smtp_url, defaults.delivery_max_attempts) == (None, 8)
    assert defaults.delivery_retry_seconds == 30.0 and defaults.delivery_worker
    quick = TraceSettings.from_env(
        {
            "TRACE_HOME": str(tmp_path),
            "TRACE_DELIVERY_RETRY_SECONDS": "0.05",
            "TRACE_DELIVERY_WORKER": "0",
            "TRACE_PUBLIC_URL": "https://trace.example.org/",
        }
    )
    assert quick.delivery_retry_seconds == 0.05 and not quick.delivery_worker
    assert quick.public_url == "https://trace.example.org"
    with pytest.raises(SettingsError):
        TraceSettings.from_env({"TRACE_HOME": str(tmp_path), "TRACE_DELIVERY_RETRY_SECONDS": "0"})


class _Handler:
    def __init__(self) -> None:
        self.logins: list[tuple[bytes, bytes]] = []
        self.received: list[bytes] = []

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        self.received.append(envelope.content)
        return "250 OK"


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_starttls_comes_before_the_password(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    handler = _Handler()

    def authenticate(_server: Any, _session: Any, _envelope: Any, _mech: str, data: Any) -> Any:
        assert isinstance(data, LoginPassword)
        handler.logins.append((data.login, data.password))
        return AuthResult(success=data.password == SECRET_PASSWORD.encode())

    port = free_port()
    controller = Controller(
        handler,
        hostname="127.0.0.1",
        port=port,
        tls_context=server_tls,
        require_starttls=True,  # a password is refused before TLS
        auth_required=True,
        authenticator=authenticate,
    )
    controller.start()
    try:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "t@x.org", "a@x.org", "Hi"
        message.set_content("news")
        trusted = ssl.create_default_context(cafile=str(cert))
        url = f"smtp://desk%40relief:{SECRET_PASSWORD.replace('@', '%40').replace('/', '%2F')}"
        smtp.send(f"{url}@127.0.0.1:{port}", message, context=trusted)
        assert handler.logins == [(b"desk@relief", SECRET_PASSWORD.encode())]
        assert len(handler.received) == 1
        with pytest.raises(SendError) as untrusted:  # the certificate is checked
            smtp.send(f"smtp://desk:x@127.0.0.1:{port}", message)
        assert not untrusted.value.permanent
    finally:
        controller.stop()


def test_trace_worker_once_sends_what_is_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_app.cli import app as cli

    url = f"sqlite:///{tmp_path / 'trace.db'}"
    db = Database(make_engine(url))
    migrate(db.engine)
    with webhook_receiver() as receiver:
        with db.session() as session:
            incident_id, person_id = make_incident(session)
            make_endpoint(session, incident_id, receiver.url)
            event_id = make_event(session, incident_id, person_id)
        monkeypatch.setenv("TRACE_HOME", str(tmp_path))
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.delenv("TRACE_SMTP_URL", raising=False)
        monkeypatch.setenv("TRACE_WEBHOOK_PRIVATE_ADDRESSES", "allow")  # 127.0.0.1
        result = CliRunner().invoke(cli, ["worker", "--once"])
        assert result.exit_code == 0, result.output
        assert "Delivered 1, failed 0" in result.output
        assert [c.headers["webhook-id"] for c in receiver.calls] == [event_id]
    db.dispose()
