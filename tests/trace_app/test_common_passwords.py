"""Common passwords are refused (issue 38, hole 7: ``password1234`` and ``aaaaaaaaaaaa``
were accepted; only the length of 12 was enforced). The check is zxcvbn's, with its own
lists, loaded on the first check only."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from accounts_helpers import PASSWORD, TEST_OPERATOR
from typer.testing import CliRunner

from trace_app.accounts import passwords
from trace_app.accounts.users import (
    AccountError,
    NewMembership,
    create_user,
    find_user,
    set_password,
)
from trace_app.domain.audit import require_audit
from trace_app.store.db import Database

COMMON = [
    "password1234",
    "aaaaaaaaaaaa",
    "Password1234!",
    "abcdefghijkl",
    "123456789012",
    "qwertyuiopasdf",
    "iloveyou1234",
    "a" * 100,  # past zxcvbn's 72 characters: the start is checked
]
# what the tests, the browser tests and the bench sign in with: all must pass
KEPT = [
    PASSWORD,
    "browser tests password",
    "a different long passphrase",
    "another long enough passphrase",
    "a long admin passphrase",
    "a long reporter passphrase",
    "a long enough password",
    "a bench passphrase of some length",
    "twelve chars ok",
    "tr4il-mud-kettle-" + "x" * 1000,  # long: only its first 72 characters are scored
]


@pytest.mark.parametrize("password", COMMON)
def test_common_passwords_are_refused_with_the_reason(password: str) -> None:
    with pytest.raises(passwords.PasswordRuleError) as refused:
        passwords.check_password_rule(password)
    message = str(refused.value)
    assert message.startswith("This password is too easy to guess.")
    assert message.endswith(passwords.CHOOSE_ANOTHER)


def test_the_warning_says_why() -> None:
    with pytest.raises(passwords.PasswordRuleError, match="very common password"):
        passwords.check_password_rule("password1234")
    with pytest.raises(passwords.PasswordRuleError, match='Repeats like "aaa"'):
        passwords.check_password_rule("aaaaaaaaaaaa")


def test_the_account_name_counts_as_known() -> None:
    passwords.check_password_rule("ritathapa2026")  # another account may use it
    with pytest.raises(passwords.PasswordRuleError):
        passwords.check_password_rule("ritathapa2026", user_inputs=["ritathapa"])


@pytest.mark.parametrize("password", KEPT)
def test_the_passwords_in_use_pass(password: str) -> None:
    passwords.check_password_rule(password)


def test_demo_passwords_pass() -> None:
    for _ in range(200):  # as reset_demo_accounts makes them
        passwords.check_password_rule(secrets.token_urlsafe(12))


def test_the_length_rule_comes_first() -> None:
    with pytest.raises(passwords.PasswordRuleError, match="at least 12 characters"):
        passwords.check_password_rule("password")
    with pytest.raises(passwords.PasswordRuleError, match="at most 1024"):
        passwords.check_password_rule("x" * 1025)


def test_accounts_refuse_them_by_the_same_error(database: Database) -> None:
    with require_audit(database.sessions()) as session:
        with pytest.raises(AccountError, match="too easy to guess"):
            create_user(
                session, TEST_OPERATOR, "rita", "password1234", NewMembership("viewer", "Camp")
            )
        create_user(session, TEST_OPERATOR, "rita", PASSWORD, NewMembership("viewer", "Camp"))
        user = find_user(session, "rita")
        assert user is not None
        before = user.password_hash
        with pytest.raises(AccountError, match="too easy to guess"):
            set_password(session, TEST_OPERATOR, user, "rita-rita-rita")
        assert user.password_hash == before
        session.rollback()


def test_trace_user_create_says_why_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_app.cli import app as cli

    monkeypatch.setenv("TRACE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    args = ["user", "create", "ops", "--role", "admin", "--password-stdin"]
    weak = CliRunner().invoke(cli, args, input="password1234\n")
    assert weak.exit_code == 2
    assert "This password is too easy to guess" in weak.output
    assert "Traceback" not in weak.output
    made = CliRunner().invoke(cli, args, input="a long admin passphrase\n")
    assert made.exit_code == 0, made.output


def test_zxcvbn_is_loaded_on_the_first_check_only() -> None:
    code = (
        "import sys, trace_app.cli, trace_app.accounts.users; "
        "assert 'zxcvbn' not in sys.modules; "
        "from trace_app.accounts.passwords import check_password_rule; "
        "check_password_rule('a long admin passphrase'); "
        "assert 'zxcvbn' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
