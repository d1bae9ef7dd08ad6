"""LiteralScan: "does any of these literal strings occur in this text?", fast.

CaseBuilder's heuristics first ask cheap questions of every record text ("could this hold
a hypothesis, an entity, an expectation?"). Asked with ``any(lit in text for lit in
literals)`` that is one pass over the text per literal, which dominates a build of many
records. ``LiteralScan`` answers the same question in one pass with a compiled
alternation of the escaped literals run by the Rust ``regex`` engine that pydantic-core
ships (``regex_engine="rust-regex"``; its literal search is linear and SIMD-accelerated).
pydantic is already a dependency; see docs/decisions/0025-case-build-speed.md.

The answer is exactly ``any(lit in text for lit in literals)``: the pattern holds only
literals (every character written as ``\\x{HEX}`` unless it is an ASCII letter or digit),
and a text the engine cannot take (a string holding lone surrogates is not valid UTF-8)
is scanned in Python instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic_core import SchemaValidator, core_schema


def literal_pattern(literal: str) -> str:
    """``literal`` as a Rust regex matching exactly that text."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in literal)


def rust_search(pattern: str) -> SchemaValidator:
    """A validator whose ``isinstance_python(text)`` is true when the Rust regex
    ``pattern`` matches somewhere in ``text`` (false too for a text holding lone
    surrogates, which the engine cannot read: check ``text.isascii()`` first or fall
    back as :class:`LiteralScan` does)."""
    return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))


_literal_pattern = literal_pattern
_validator = rust_search


_TAKES_TEXT = _validator("")  # matches every string the engine can read


class LiteralScan:
    def __init__(self, literals: Iterable[str]) -> None:
        self.literals = tuple(literals)
        if not self.literals or not all(self.literals):
            raise ValueError("LiteralScan needs non-empty literals")
        self._validator: SchemaValidator | None = None
        if all(_TAKES_TEXT.isinstance_python(x) for x in self.literals):  # no lone surrogates
            self._validator = _validator("|".join(_literal_pattern(x) for x in self.literals))
        # any_in for ASCII text only (which the engine always reads): one call less
        self.any_in_ascii: Callable[[str], bool] = (
            self._validator.isinstance_python if self._validator is not None else self.any_in
        )

    def any_in(self, text: str) -> bool:
        """``any(lit in text for lit in self.literals)``."""
        if self._validator is not None:
            if self._validator.isinstance_python(text):
                return True
            if text.isascii() or _TAKES_TEXT.isinstance_python(text):
                return False
        return any(lit in text for lit in self.literals)


def may_search(validator: SchemaValidator, text: str) -> bool:
    """False only when the Rust pattern of ``validator`` (from :func:`rust_search`)
    matches nowhere in ``text``: true when it matches, and when the engine cannot read
    ``text`` (lone surrogates). For a pattern made of ASCII literals and ASCII ranges
    such as ``[A-Z]`` (no ``\\w``, ``\\d``, ``\\s``, ``\\b``, case folding), which match
    the same characters in Rust and in ``re``, false means ``re`` finds nothing either."""
    return validator.isinstance_python(text) or (
        not text.isascii() and not _TAKES_TEXT.isinstance_python(text)
    )
