"""Session-wide test rules shared by every package.

- Network guard: for the whole session, a socket may only connect to loopback
  (127.0.0.0/8, ::1) or a Unix socket. Anything else raises ``NetworkRefused`` (not an
  ``OSError``, so no client library can mistake it for a transient failure and carry
  on): a test can never reach a real model provider by accident. Child processes a
  test starts are not covered; they must be pointed at loopback servers.
- ``real_data_dir``: the real public data (``REAL_DATA_DIR`` or ``<repo>/../shared/data``).
- ``pg_url``: a PostgreSQL URL whose ``search_path`` is a fresh schema, dropped after.
- Parallel runs (``make test``: ``pytest -n auto --dist loadfile``, pytest-xdist): each
  test file goes whole to one worker, so module-scoped fixtures (a browser, a live server)
  start once per file as in a serial run; every ``localmodel`` file goes to one worker, so
  at most one embedded llama.cpp server runs at a time and the session's server is shared.
  Each worker is its own process: servers pick free ports, databases are per-test temporary
  files or fresh PostgreSQL schemas, files go under pytest's per-worker ``tmp_path``.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parallel_units import work_unit
from pg_trigram import trigram_schema

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


class NetworkRefused(RuntimeError):
    """A test tried to connect somewhere other than loopback."""


def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and abstract sockets
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # a host name other than localhost
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise NetworkRefused(f"tests may only connect to loopback, not {address!r}")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise NetworkRefused(f"tests may only connect to loopback, not {address!r}")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
# litellm must never fetch its price list during tests
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile``: whole files, and the embedded model's files together, per
    worker (tests/parallel_units.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileOrGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return FileOrGroupScheduling(config, log)


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real public data folder; the test is skipped with the reason when absent."""
    configured = os.environ.get("REAL_DATA_DIR")
    path = Path(configured) if configured else REPO.parent / "shared" / "data"
    if not path.is_dir():
        source = "REAL_DATA_DIR" if configured else "<repo>/../shared/data"
        pytest.skip(f"real data folder {path} ({source}) is absent")
    return path


def _pg_server_url() -> str:
    return os.environ.get("TEST_DATABASE_URL", DEFAULT_PG_SERVER)


def _pg_unreachable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required in CI but unreachable: {reason}")
    pytest.skip(f"PostgreSQL at {_pg_server_url()} is unreachable: {reason}")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A SQLAlchemy URL on the test PostgreSQL server with ``search_path`` set to a new,
    uniquely named schema (dropped afterwards), so parallel runs never collide.

    Skips when the server is unreachable, except when ``CI`` is set: then it fails.
    """
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    server = make_url(_pg_server_url())
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(
        server.update_query_dict({"connect_timeout": "3"}), isolation_level="AUTOCOMMIT"
    )
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
            trigrams = trigram_schema(conn)
    except OperationalError as exc:
        admin.dispose()
        _pg_unreachable(str(exc.orig).splitlines()[0] if exc.orig else str(exc))
    url = server.update_query_dict({"options": f"-csearch_path={schema},{trigrams}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(autouse=True, scope="session")
def _cheap_password_hashing() -> Iterator[None]:
    """Real Argon2id, at a test cost (1 pass over 8 MiB, 1 lane): hundreds of sign-ins stay
    quick. ``tests/trace_app/accounts/test_passwords.py`` checks the shipped default cost."""
    from trace_app.accounts import passwords

    passwords.use_cost(passwords.Argon2Cost(time_cost=1, memory_cost=8192, parallelism=1))
    yield
    passwords.use_cost(passwords.DEFAULT_COST)
