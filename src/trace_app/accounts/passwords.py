"""Passwords: the length rule, the common-password check and Argon2id hashing
(argon2-cffi).

A new password needs 12 to 1024 characters and must not be easy to guess
(:func:`check_password_rule`). That check is zxcvbn's (the ``zxcvbn`` package, Dropbox's
estimator ported to Python). It carries its own lists (the 30,000 most common passwords
of leaked password sets, 30,000 English Wikipedia words, names and surnames, TV and film
words) and finds repeats (``aaaaaaaaaaaa``), sequences (``abcdefghijkl``), keyboard
walks, dates, l33t spellings and the account's own name, with no download at run time,
as NIST SP 800-63B (5.1.1.2) asks of a verifier. A password it scores below 3 ("safely
unguessable": fewer than 10**8 guesses) is refused with zxcvbn's own warning. It reads
at most the first 72 characters (zxcvbn's own limit; a longer password is never weaker
than its start). The package is imported on the first check only (its lists are large).

The cost is argon2-cffi's default, RFC 9106's second recommended profile: Argon2id,
3 passes over 64 MiB with 4 lanes (``time_cost=3, memory_cost=65536, parallelism=4``).
One hash or check takes about 50-100 ms of one core on the machines this was measured on
(``bench/bench_auth.py`` prints it). A hash made with other parameters is re-made with
these at the next successful login.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from trace_app.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from argon2 import PasswordHasher

MIN_PASSWORD_CHARACTERS = 12
MAX_PASSWORD_CHARACTERS = 1024
# zxcvbn's score 3, "safely unguessable: moderate protection from an offline slow-hash
# scenario", starts at 10**8 guesses; below it a password is in a common list or nearly so.
MIN_SCORE = 3
# zxcvbn refuses longer input (its matching grows fast with the length).
GUESS_CHECK_CHARACTERS = 72
TOO_EASY = "This password is too easy to guess."
CHOOSE_ANOTHER = (
    "Choose another: a few uncommon words in a row are easy to remember and hard to guess."
)


_ZXCVBN_LOCK = threading.Lock()


class PasswordRuleError(InvalidInputError):
    """A password that breaks the length rule or is too easy to guess."""

    code = "weak_password"


def common_password_warning(password: str, user_inputs: Sequence[str] = ()) -> str | None:
    """``None`` when zxcvbn scores ``password`` (its first 72 characters) at
    :data:`MIN_SCORE` or more (at least 10**8 guesses); otherwise why it is easy to guess (zxcvbn's
    warning, possibly empty). ``user_inputs``: words of this account (its name) that
    count as known to an attacker."""
    from zxcvbn import zxcvbn  # its lists are large: loaded on the first check

    # zxcvbn keeps the user inputs in a module-level table while it scores: one at a time
    with _ZXCVBN_LOCK:
        result = zxcvbn(
            password[:GUESS_CHECK_CHARACTERS],
            user_inputs=[word for word in user_inputs if word],
            max_length=GUESS_CHECK_CHARACTERS,
        )
    if int(result["score"]) >= MIN_SCORE:
        return None
    return str(result["feedback"].get("warning") or "")


def check_password_rule(password: str, *, user_inputs: Sequence[str] = ()) -> None:
    """Raise :class:`PasswordRuleError` for a password shorter than 12 or longer than
    1024 characters, only spaces, or easy to guess (:func:`common_password_warning`;
    ``user_inputs``: the account's name)."""
    if len(password) < MIN_PASSWORD_CHARACTERS:
        raise PasswordRuleError(
            f"A password needs at least {MIN_PASSWORD_CHARACTERS} characters "
            "(a few words in a row are easy to remember)."
        )
    if len(password) > MAX_PASSWORD_CHARACTERS:
        raise PasswordRuleError(
            f"A password can have at most {MAX_PASSWORD_CHARACTERS} characters."
        )
    if not password.strip():
        raise PasswordRuleError("A password cannot be only spaces.")
    warning = common_password_warning(password, user_inputs)
    if warning is not None:
        why = f"{warning.rstrip('.')}." if warning else ""
        raise PasswordRuleError(" ".join(part for part in (TOO_EASY, why, CHOOSE_ANOTHER) if part))


@dataclass(frozen=True, slots=True)
class Argon2Cost:
    """Argon2id's parameters: passes, memory in KiB, lanes."""

    time_cost: int = 3
    memory_cost: int = 65536
    parallelism: int = 4


DEFAULT_COST = Argon2Cost()  # RFC 9106, second recommended option
_cost = DEFAULT_COST


def use_cost(cost: Argon2Cost) -> None:
    """Hash with other parameters from now on (the test suite uses a cheaper cost; a
    hash keeps its own parameters, so every stored hash still verifies)."""
    global _cost
    _cost = cost
    hasher.cache_clear()
    dummy_hash.cache_clear()


@lru_cache(maxsize=1)
def hasher() -> PasswordHasher:
    from argon2 import PasswordHasher  # loaded on first use: keeps `trace --help` fast

    return PasswordHasher(
        time_cost=_cost.time_cost, memory_cost=_cost.memory_cost, parallelism=_cost.parallelism
    )


def hash_password(password: str, *, user_inputs: Sequence[str] = ()) -> str:
    """The Argon2id hash of a new password that passes :func:`check_password_rule`."""
    check_password_rule(password, user_inputs=user_inputs)
    return hasher().hash(password)


def verify_password(stored_hash: str, password: str) -> bool:
    """True when ``password`` matches; never raises for a wrong or malformed hash."""
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

    try:
        return hasher().verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    return hasher().check_needs_rehash(stored_hash)


@lru_cache(maxsize=1)
def dummy_hash() -> str:
    """A hash to check against when no such account exists, so that an unknown name costs
    the same time as a wrong password (no account enumeration by timing)."""
    return hasher().hash("no account has this password, it only costs time")
