"""Trace's settings, read from the environment.

| variable | default | meaning |
| --- | --- | --- |
| ``TRACE_HOME`` | ``<cwd>/.trace-local`` | folder for the SQLite file and the model ledger |
| ``DATABASE_URL`` | ``sqlite:///<TRACE_HOME>/trace.db`` | SQLAlchemy URL (psycopg 3 for PG) |
| ``TRACE_MAX_BODY_BYTES`` | ``1048576`` | largest request body the web app accepts (413 above) |
| ``TRACE_DEMO`` | ``0`` | ``1``: a demo server (seed an empty database, allow Reset) |
| ``TRACE_PASSPHRASE_LIMIT`` | ``5/minute`` | wrong live-check passphrases per client address |
| ``TRACE_PASSPHRASE_LIMIT_OVERALL`` | ``30/minute`` | wrong passphrases from all addresses |
| ``TRACE_RATE_LIMIT_STORAGE`` | ``memory://`` | where the counts live (a ``limits`` URI) |
| ``TRACE_PFIF_DOMAIN`` | ``trace.invalid`` | domain of exported PFIF record ids |
| ``TRACE_PFIF_MAX_BYTES`` | ``67108864`` | largest PFIF or CSV file read (64 MiB) |
| ``TRACE_RECORDED_INVESTIGATIONS`` | the checkout's ``demo/`` file | runs Reset replays |
| ``TRACE_MODEL_REQUEST_CAP`` | ``200`` | the model ledger's lifetime request cap, 1-1000 |
| ``TRACE_ALLOWED_HOSTS`` | the bound host | ``Host`` names the server answers (others: 400) |
| ``TRACE_TRUSTED_PROXIES`` | none | proxy addresses whose ``X-Forwarded-For``/``-Proto`` count |
| ``TRACE_SESSION_IDLE_MINUTES`` | ``30`` | a signed-in session ends after this long unused |
| ``TRACE_SESSION_MAX_HOURS`` | ``12`` | and this long after sign-in, whatever happens |
| ``TRACE_COOKIE_SECURE`` | ``auto`` | ``auto``: ``Secure`` cookies over HTTPS; ``always`` |
| ``TRACE_LOGIN_LIMIT`` | ``5/minute`` | failed sign-ins per account name |
| ``TRACE_LOGIN_LIMIT_ADDRESS`` | ``20/minute`` | failed sign-ins per client address |
| ``TRACE_PUBLISH_LIMIT`` | ``120/minute`` | reports published per account or token |
| ``TRACE_SMTP_URL`` | none (mail waits) | ``smtp://`` or ``smtps://user:password@host:port`` |
| ``TRACE_MAIL_FROM`` | ``trace@trace.invalid`` | the ``From`` address of mail to enquirers |
| ``TRACE_PUBLIC_URL`` | ``http://HOST:PORT`` served | the base of links in mail |
| ``TRACE_DELIVERY_RETRY_SECONDS`` | ``30`` | first backoff step of a failed delivery (doubles) |
| ``TRACE_DELIVERY_MAX_ATTEMPTS`` | ``8`` | attempts before a delivery is dead (a dead letter) |
| ``TRACE_DELIVERY_LEASE_SECONDS`` | ``60`` | a worker's claim; past it another worker retries |
| ``TRACE_DELIVERY_WORKER`` | ``1`` | ``0``: ``trace serve`` runs no delivery worker |
| ``TRACE_WEBHOOK_PRIVATE_ADDRESSES`` | ``refuse`` | ``allow``: webhooks to private addresses |

The model's settings (which model, its key, the passphrase, the audit log) are
:class:`trace_app.investigation.model_settings.ModelSettings`. These two classes are the
only readers of the environment in ``trace_app``.

Nothing is created when settings are read; :meth:`TraceSettings.ensure_home` creates the
home folder on demand (only when the default SQLite file or the ledger needs it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_PFIF_DOMAIN = "trace.invalid"
DEFAULT_PFIF_MAX_BYTES = 64 * 1024 * 1024
# A PFIF domain: a host name (letters, digits, dots, hyphens), as record ids begin with one.
_DOMAIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
HOME_DIRNAME = ".trace-local"
RECORDED_INVESTIGATIONS_ENV = "TRACE_RECORDED_INVESTIGATIONS"
REQUEST_CAP_ENV = "TRACE_MODEL_REQUEST_CAP"
DEFAULT_REQUEST_CAP = 200
# Without TRACE_ALLOWED_HOSTS: `trace serve` answers to the host it is bound to, and an app
# made in code to the loopback names.
DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost")
DEFAULT_MAIL_FROM = "trace@trace.invalid"


class SettingsError(ValueError):
    """A setting from the environment has a value Trace cannot use."""

    code = "settings_invalid"  # read by the CLI; below the domain, so not of its error tree


def normalize_database_url(url: str) -> str:
    """Pick the psycopg 3 driver for plain PostgreSQL URLs; leave any other URL as given."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


@dataclass(frozen=True, slots=True)
class TraceSettings:
    home: Path
    database_url: str
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # A demo server (``trace demo``, ``trace serve --demo``) seeds the Flood Relief Demo
    # into an empty database and offers Reset demo; a deployment does neither.
    demo: bool = False
    # wrong live-check passphrases allowed per client address, and from all addresses
    guess_limit: str = "5/minute"
    guess_limit_overall: str = "30/minute"
    rate_limit_storage: str = "memory://"
    # PFIF interchange (docs/interchange.md): the domain of exported record ids, and the
    # largest document read
    pfif_domain: str = DEFAULT_PFIF_DOMAIN
    pfif_max_bytes: int = DEFAULT_PFIF_MAX_BYTES
    # the recorded-runs file named by TRACE_RECORDED_INVESTIGATIONS; None: the default
    # place (trace_app.investigation.recorded.default_path)
    recorded_investigations: Path | None = None
    # the model ledger's lifetime request cap (clamped to 1-1000 by modelgate)
    request_cap: int = DEFAULT_REQUEST_CAP
    # the edge (docs/trace.md "Accounts and access"): Host names answered, proxies trusted
    allowed_hosts: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    # sessions: idle and absolute timeouts; Secure cookies over HTTPS ("auto") or always
    session_idle_minutes: int = 30
    session_max_hours: int = 12
    cookie_secure: str = "auto"
    # throttles (limits strings): failed sign-ins per account and per address, publishing
    login_limit: str = "5/minute"
    login_limit_address: str = "20/minute"
    publish_limit: str = "120/minute"
    # refused authorisations written to the audit trail, per principal
    refusal_audit_limit: str = "10/minute"
    # notifications (docs/notifications.md): the mail server (None: mail waits in the
    # outbox; never shown, it may hold a password), the sender, the base of mailed links,
    # and the delivery worker's backoff, dead letter and lease
    smtp_url: str | None = field(default=None, repr=False)
    mail_from: str = DEFAULT_MAIL_FROM
    public_url: str = ""
    delivery_retry_seconds: float = 30.0
    delivery_max_attempts: int = 8
    delivery_lease_seconds: float = 60.0
    delivery_worker: bool = True
    # webhooks may go to loopback, private and link-local addresses (a partner inside the
    # server's network, tests' receivers); off: refused (notifications.destinations)
    webhook_private_addresses: bool = False

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> TraceSettings:
        env = os.environ if env is None else env
        base = Path.cwd() if cwd is None else cwd
        home_value = env.get("TRACE_HOME", "").strip()
        home = Path(home_value).expanduser() if home_value else base / HOME_DIRNAME
        if not home.is_absolute():
            home = base / home
        url = env.get("DATABASE_URL", "").strip() or f"sqlite:///{home / 'trace.db'}"
        raw_limit = env.get("TRACE_MAX_BODY_BYTES", "").strip()
        try:
            max_body = int(raw_limit) if raw_limit else DEFAULT_MAX_BODY_BYTES
        except ValueError as exc:
            raise SettingsError(
                f"TRACE_MAX_BODY_BYTES must be a whole number: {raw_limit!r}"
            ) from exc
        if max_body < 1024:
            raise SettingsError("TRACE_MAX_BODY_BYTES must be at least 1024")
        demo = env.get("TRACE_DEMO", "0").strip().lower() in {"1", "true", "yes"}
        limits = {
            name: _rate(env, name, default)
            for name, default in (
                ("TRACE_PASSPHRASE_LIMIT", "5/minute"),
                ("TRACE_PASSPHRASE_LIMIT_OVERALL", "30/minute"),
            )
        }
        storage = env.get("TRACE_RATE_LIMIT_STORAGE", "").strip() or "memory://"
        domain = env.get("TRACE_PFIF_DOMAIN", "").strip() or DEFAULT_PFIF_DOMAIN
        if not _DOMAIN.fullmatch(domain):
            raise SettingsError(
                f"TRACE_PFIF_DOMAIN must be a host name such as trace.example.org: {domain!r}"
            )
        raw_pfif = env.get("TRACE_PFIF_MAX_BYTES", "").strip()
        try:
            pfif_max = int(raw_pfif) if raw_pfif else DEFAULT_PFIF_MAX_BYTES
        except ValueError as exc:
            raise SettingsError(
                f"TRACE_PFIF_MAX_BYTES must be a whole number: {raw_pfif!r}"
            ) from exc
        if pfif_max < 1024:
            raise SettingsError("TRACE_PFIF_MAX_BYTES must be at least 1024")
        recorded = env.get(RECORDED_INVESTIGATIONS_ENV, "").strip()
        from modelgate.ledger import cap_from_env  # not at the top: keeps `trace --help` fast

        cap = cap_from_env(REQUEST_CAP_ENV, DEFAULT_REQUEST_CAP, env)
        secure = env.get("TRACE_COOKIE_SECURE", "").strip().lower() or "auto"
        if secure not in {"auto", "always"}:
            raise SettingsError(f"TRACE_COOKIE_SECURE must be auto or always, not {secure!r}")
        return cls(
            home=home,
            database_url=normalize_database_url(url),
            max_body_bytes=max_body,
            demo=demo,
            guess_limit=limits["TRACE_PASSPHRASE_LIMIT"],
            guess_limit_overall=limits["TRACE_PASSPHRASE_LIMIT_OVERALL"],
            rate_limit_storage=storage,
            pfif_domain=domain,
            pfif_max_bytes=pfif_max,
            recorded_investigations=Path(recorded).expanduser() if recorded else None,
            request_cap=cap,
            allowed_hosts=_names(env, "TRACE_ALLOWED_HOSTS"),
            trusted_proxies=_names(env, "TRACE_TRUSTED_PROXIES"),
            session_idle_minutes=_whole(env, "TRACE_SESSION_IDLE_MINUTES", 30, 1, 24 * 60),
            session_max_hours=_whole(env, "TRACE_SESSION_MAX_HOURS", 12, 1, 24 * 30),
            cookie_secure=secure,
            login_limit=_rate(env, "TRACE_LOGIN_LIMIT", "5/minute"),
            login_limit_address=_rate(env, "TRACE_LOGIN_LIMIT_ADDRESS", "20/minute"),
            publish_limit=_rate(env, "TRACE_PUBLISH_LIMIT", "120/minute"),
            refusal_audit_limit=_rate(env, "TRACE_REFUSAL_AUDIT_LIMIT", "10/minute"),
            smtp_url=_smtp_url(env),
            mail_from=env.get("TRACE_MAIL_FROM", "").strip() or DEFAULT_MAIL_FROM,
            public_url=_public_url(env),
            delivery_retry_seconds=_seconds(env, "TRACE_DELIVERY_RETRY_SECONDS", 30.0),
            delivery_max_attempts=_whole(env, "TRACE_DELIVERY_MAX_ATTEMPTS", 8, 1, 100),
            delivery_lease_seconds=_seconds(env, "TRACE_DELIVERY_LEASE_SECONDS", 60.0),
            delivery_worker=env.get("TRACE_DELIVERY_WORKER", "1").strip().lower()
            not in {"0", "false", "no"},
            webhook_private_addresses=_private_addresses(env),
        )

    @property
    def ledger_path(self) -> Path:
        """Where the model request ledger lives (owned by the investigation; never reset)."""
        return self.home / "model-usage.json"

    @property
    def uses_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def ensure_home(self) -> Path:
        """Create the home folder (and the SQLite file's folder) when missing."""
        self.home.mkdir(parents=True, exist_ok=True)
        if self.uses_sqlite:
            path = sqlite_path(self.database_url)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
        return self.home


def _names(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list (host names, proxy addresses); empty items are dropped."""
    return tuple(item.strip() for item in env.get(name, "").split(",") if item.strip())


def _whole(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError as exc:
        raise SettingsError(f"{name} must be a whole number: {raw!r}") from exc
    if not low <= value <= high:
        raise SettingsError(f"{name} must be from {low} to {high}, not {value}")
    return value


def _private_addresses(env: Mapping[str, str]) -> bool:
    """``TRACE_WEBHOOK_PRIVATE_ADDRESSES``: ``allow`` or ``refuse`` (the default)."""
    value = env.get("TRACE_WEBHOOK_PRIVATE_ADDRESSES", "refuse").strip().lower()
    if value not in {"allow", "refuse"}:
        raise SettingsError("TRACE_WEBHOOK_PRIVATE_ADDRESSES must be allow or refuse")
    return value == "allow"


def _smtp_url(env: Mapping[str, str]) -> str | None:
    """``smtp://[user:password@]host[:port]`` or ``smtps://...``; the message never repeats
    the value (it may hold a password)."""
    raw = env.get("TRACE_SMTP_URL", "").strip()
    if not raw:
        return None
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError as exc:
        raise SettingsError("TRACE_SMTP_URL is not a URL Trace can read") from exc
    if parts.scheme not in {"smtp", "smtps"} or not parts.hostname:
        raise SettingsError("TRACE_SMTP_URL must look like smtp://host:25 or smtps://host:465")
    return raw


def _public_url(env: Mapping[str, str]) -> str:
    raw = env.get("TRACE_PUBLIC_URL", "").strip().rstrip("/")
    if raw and (urlsplit(raw).scheme not in {"http", "https"} or not urlsplit(raw).netloc):
        raise SettingsError(f"TRACE_PUBLIC_URL must start with https:// or http://: {raw!r}")
    return raw


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError as exc:
        raise SettingsError(f"{name} must be a number of seconds: {raw!r}") from exc
    if not 0.01 <= value <= 86400:
        raise SettingsError(f"{name} must be from 0.01 to 86400 seconds, not {value}")
    return value


def _rate(env: Mapping[str, str], name: str, default: str) -> str:
    from limits import parse

    value = env.get(name, "").strip() or default
    try:
        parse(value)
    except ValueError as exc:
        raise SettingsError(f"{name} must look like '5/minute', not {value!r}") from exc
    return value


def sqlite_path(url: str) -> Path | None:
    """The file behind a ``sqlite:///`` URL, or None for in-memory databases."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return None
    rest = url[len(prefix) :].split("?", 1)[0]
    if not rest or rest == ":memory:":
        return None
    return Path(rest)
