"""Passwords: the length rule and Argon2id hashing (argon2-cffi).

The cost is argon2-cffi's default, RFC 9106's second recommended profile: Argon2id,
3 passes over 64 MiB with 4 lanes (``time_cost=3, memory_cost=65536, parallelism=4``).
One hash or check takes about 50-100 ms of one core on the machines this was measured on
(``bench/bench_auth.py`` prints it). A hash made with other parameters is re-made with
these at the next successful login.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from argon2 import PasswordHasher

MIN_PASSWORD_CHARACTERS = 12
MAX_PASSWORD_CHARACTERS = 1024


class PasswordRuleError(ValueError):
    """A password that breaks the length rule."""


def check_password_rule(password: str) -> None:
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


def hash_password(password: str) -> str:
    check_password_rule(password)
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
