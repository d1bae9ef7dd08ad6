"""Sending one message through the mail server named by ``TRACE_SMTP_URL``.

``smtp://[user:password@]host[:port]`` (port 25 by default) upgrades with STARTTLS when
the server offers it; ``smtps://...`` (port 465) speaks TLS from the start. Both check the
server's certificate. The standard library's ``smtplib`` is enough: the delivery worker is
a thread that sends one message at a time (ADR 0181). Errors never carry the password.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from trace_app.notifications.webhooks import SendError

TIMEOUT_S = 15.0


def send(
    url: str,
    message: EmailMessage,
    *,
    timeout: float = TIMEOUT_S,
    context: ssl.SSLContext | None = None,
) -> None:
    """Hand ``message`` to the server; raises :class:`SendError` (``permanent`` for a 5xx
    answer such as an unknown recipient). ``context``: the TLS settings (default: the
    system's certificate authorities, host name checked)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    secure = parts.scheme == "smtps"
    port = parts.port or (465 if secure else 25)
    context = context or ssl.create_default_context()
    try:
        client: smtplib.SMTP
        if secure:
            client = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
        else:
            client = smtplib.SMTP(host, port, timeout=timeout)
        with client:
            client.ehlo()
            if not secure and client.has_extn("starttls"):
                client.starttls(context=context)
                client.ehlo()
            if parts.username:
                client.login(unquote(parts.username), unquote(parts.password or ""))
            client.send_message(message)
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        raise SendError(
            f"the mail server refused the address ({', '.join(map(str, codes))})",
            permanent=all(500 <= code < 600 for code in codes),
        ) from None
    except smtplib.SMTPResponseException as exc:
        raise SendError(
            f"the mail server answered {exc.smtp_code}", permanent=500 <= exc.smtp_code < 600
        ) from None
    except (OSError, smtplib.SMTPException) as exc:
        raise SendError(f"the mail server could not be reached ({type(exc).__name__})") from None
