"""Entity heuristics of CaseBuilder: components, versions, endpoints, files, error codes.

Simple, documented pattern rules (docs/intake-format.md lists them), split from heuristics.py.
Each pattern is tried only where it can start (candidate starts found from a literal);
the rules as first written, each pattern run over the whole text, are kept in
``tests/viano/case_rules_reference.py``, and the tests compare the two.
"""

from __future__ import annotations

import re

from viano_bug_analysis.case.textscan import LiteralScan, literal_pattern, may_search, rust_search

# -- entities -----------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>()\"'`\]\[{}|\\^]+")
_HTTP_PATH = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/[^\s\"'`<>]*)")
_PKG_VERSION = re.compile(
    r"(?<![\w@/.-])(?P<name>@?[a-z0-9][\w.-]*(?:/[\w.-]+)?)@v?(?P<ver>\d+(?:\.\d+){1,3}"
    r"(?:-[0-9A-Za-z.]+)?)\b"
)
# Capitalised words that stand before a version number without naming a product
# ("Version 0.27.2", "Patch 0.2", "Since 4.0"): no name of _NAMED_VERSION.
_NOT_NAMES = (
    "Version|Versions|Ver|Release|Released|Releases|Patch|Patched|Build|Revision|Rev"
    "|Update|Updated|Upgrade|Upgraded|Step|Section|Chapter|Page|Line|Item|Figure|Table|Part"
    "|Phase|Stage|Level|Since|With|From|In|On|At|After|Before|Until|And|Or|Of|To|The|For"
    "|Is|Was|Using|Tested|Fixed|See|Also|Between|Than"
)
_NAMED_VERSION = re.compile(
    rf"\b(?P<name>(?!(?:{_NOT_NAMES})(?![\w.+-]))[A-Z][A-Za-z][\w.+-]{{0,30}}"
    r"|node(?:\.?js)?|npm|yarn|python|java|go|rustc)(?:\s+|/)v?(?P<ver>\d+\.\d+(?:\.\d+){0,2})\b"
)
# a bare version may end a sentence ("fixed in 2.3.0."), not a longer dotted name or number
_BARE_VERSION = re.compile(
    r"(?<![\w.@/:-])v?(?P<ver>\d+\.\d+\.\d+(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?!\w|\.\w)"
)
_FILE = re.compile(
    r"(?<![\w/.@-])(?P<f>(?:[\w.-]+/)*[\w-][\w.-]*\.(?:jsx?|tsx?|mjs|cjs|json|py|rb|go|rs|java"
    r"|kt|c|cc|cpp|h|hpp|cs|css|scss|less|html?|vue|svelte|ya?ml|toml|lock|sh|xml|gradle"
    r"|php|swift|sql|ini|cfg|conf|log))\b"
)
_ERROR_CODE = re.compile(
    r"\b(?P<e>E[A-Z]{3,}[A-Z0-9]*|ERR_[A-Z0-9_]+|[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)"
    r"|NS_ERROR_[A-Z_]+|HTTP [45]\d\d)\b"
)
# library names and calls that look like file names
_FILE_STOP = {
    "node.js",
    "console.log",
    "vue.js",
    "next.js",
    "nuxt.js",
    "react.js",
    "express.js",
    "three.js",
    "chart.js",
    "d3.js",
    "moment.js",
    "ember.js",
    "angular.js",
    "backbone.js",
    "socket.io",
    "deno.js",
    "bun.js",
}
_HTTP_VERBS = ("GET ", "POST ", "PUT ", "PATCH ", "DELETE ", "HEAD ", "OPTIONS ")
_FILE_HINT = re.compile(
    r"\.(?:jsx?|tsx?|mjs|cjs|json|py|rb|go|rs|java|kt|c|cc|cpp|h|hpp|cs|css|scss|less|html?"
    r"|vue|svelte|ya?ml|toml|lock|sh|xml|gradle|php|swift|sql|ini|cfg|conf|log)\b"
)
_DIGIT_DOT = re.compile(r"\d\.\d")
_ERROR_HINTS = ("Error", "Exception", "ERR_", "HTTP 4", "HTTP 5")
# Literals at least one of which occurs in ASCII text whenever one of the checks in
# extract_entities can succeed: "://", the HTTP verbs and error hints, every ASCII
# digit-dot-digit, and a dot before the first letters of each file extension.
_ENTITY_LITERALS = (
    "://",
    *_HTTP_VERBS,
    *_ERROR_HINTS,
    *(f"{a}.{b}" for a in range(10) for b in range(10)),
    *(".js", ".ts", ".mjs", ".py", ".rb", ".go", ".rs", ".java", ".kt", ".c", ".h"),
    *(".less", ".vue", ".svelte", ".yml", ".yaml", ".toml", ".lock", ".sh", ".xml"),
    *(".scss", ".gradle", ".php", ".swift", ".sql", ".ini", ".log"),
)
# The whole pre-check of ASCII text in one Rust pass: the literals, the 100 digit-dot-digit
# literals written as one class (scanned several times faster than 100 alternatives), and
# ``E[A-Z]{3}`` (the same ASCII classes in both engines).
_ENTITY_ASCII_SCAN = rust_search(
    "|".join(literal_pattern(x) for x in _ENTITY_LITERALS if not _DIGIT_DOT.fullmatch(x))
    + r"|[0-9]\.[0-9]|E[A-Z]{3}"
)


def may_hold_entities(text: str) -> bool:
    """Cheap pre-check: ``extract_entities(text)`` is empty when this is false (it may be
    true for text that holds none)."""
    if not text.isascii():
        return True  # Unicode digits and case rules: the exact checks decide
    return _ENTITY_ASCII_SCAN.isinstance_python(text)


_ERROR_CODE_STOP = {"EACH", "ELSE", "EDIT", "EVEN", "EVER", "EXIT", "ETC", "EVERY", "EXACT"}


_ENTITY_GROUP = 64


def may_hold_entities_each(texts: list[str]) -> list[bool]:
    """``[may_hold_entities(t) for t in texts]``, asked of groups of texts at once: when
    none of the literals (nor ``E[A-Z]{3}``) occurs in a group's ASCII texts joined by
    NUL, none occurs in any of them; otherwise each text is asked alone."""
    out: list[bool] = []
    for i in range(0, len(texts), _ENTITY_GROUP):
        group = texts[i : i + _ENTITY_GROUP]
        joined = "\x00".join(group)
        if joined.isascii() and not _ENTITY_ASCII_SCAN.isinstance_python(joined):
            out.extend([False] * len(group))
        else:
            out.extend(may_hold_entities(t) for t in group)
    return out


def extract_entities(text: str) -> list[tuple[str, str]]:
    """(entity_type, value) pairs found in ``text`` (unordered, may repeat)."""
    return _extract_entities(text) if may_hold_entities(text) else []


def _extract_entities(text: str) -> list[tuple[str, str]]:
    """The entity rules (``_extract_entities_reference`` in the tests runs each
    pattern's ``finditer`` over the whole text), each pattern tried only where it can
    match.

    ``finditer`` over a whole text is the leftmost non-overlapping sequence of
    ``pattern.match(text, s)`` successes; a match at ``s`` does not depend on where the
    scan started (lookbehinds and ``\\b`` see the text before ``s``). So trying
    ``match`` at the sorted candidate starts, skipping those before the end of the last
    match (:func:`_matches_at`), gives the same matches whenever every start at which
    the pattern matches is a candidate. The candidates of each pattern come from a
    literal (or ``\\.(?=\\d)``) found with a prefix-searched pattern, then from the
    pattern's own rules (see each ``_*_starts``). ``sub`` with a non-empty pattern
    replaces exactly those matches. The guards are those of the reference (some only
    speed it up, ``"GET "`` and the like also decide), asked of the Rust engine where
    its answer is the same: literals and ASCII ranges on any text, ``\\b`` and digits
    on ASCII text only."""
    found: list[tuple[str, str]] = []
    no_urls = text
    if "://" in text:
        urls = list(_URL.finditer(text))
        for m in urls:
            found.append(("endpoint", m.group(0).rstrip(".,;:!?")))
        no_urls = _replaced(text, urls)
    ascii_text = no_urls.isascii()
    if _HTTP_VERB_SCAN.any_in(no_urls):  # any(verb in no_urls for verb in _HTTP_VERBS)
        for m in _matches_at(_HTTP_PATH, no_urls, [m.start() for m in _VERB_AT.finditer(no_urls)]):
            found.append(("endpoint", m.group(0)))
    back = _Back(no_urls)
    dots = _digit_dots(no_urls) if not ascii_text or _DIGIT_DOT_ASCII(no_urls) else []
    if dots:
        without_pkg = no_urls
        if "@" in no_urls:
            pkgs = _matches_at(_PKG_VERSION, no_urls, _pkg_starts(no_urls, back))
            for m in pkgs:
                found.append(("component", m.group("name")))
                found.append(("version", f"{m.group('name')}@{m.group('ver')}"))
            if pkgs:
                without_pkg = _replaced(no_urls, pkgs)
        named = set()
        for m in _matches_at(_NAMED_VERSION, no_urls, _named_starts(no_urls, dots, back)):
            found.append(("version", f"{m.group('name')} {m.group('ver')}"))
            named.add(m.group("ver"))
        bare_dots = dots if without_pkg is no_urls else _digit_dots(without_pkg)
        for m in _matches_at(_BARE_VERSION, without_pkg, _bare_starts(without_pkg, bare_dots)):
            if m.group("ver") not in named:
                found.append(("version", m.group("ver")))
    hints = (
        [m.start() for m in _FILE_HINT.finditer(no_urls)]
        if not ascii_text or _FILE_HINT_ASCII(no_urls)
        else []
    )
    if hints:
        for m in _matches_at(_FILE, no_urls, back.run_starts(_NAME_RUN, hints)):
            value = m.group("f")
            if value.lower() not in _FILE_STOP and not re.fullmatch(
                r"[\d.]+", value.rsplit(".", 1)[0]
            ):
                found.append(("file", value))
    error_at = (
        [m.start() for m in _ERROR_AT.finditer(no_urls)]
        if may_search(_ERROR_AT_RUST, no_urls)
        else []
    )
    if error_at:
        # the start of the letters before each hit (CamelCaseError), which is the hit
        # itself where a \b is before it (where the other alternatives start)
        for m in _matches_at(_ERROR_CODE, no_urls, back.run_starts(_LETTER_RUN, error_at)):
            if m.group("e") not in _ERROR_CODE_STOP:
                found.append(("error_code", m.group("e")))
    return found


# -- where each entity pattern can start (for _extract_entities) -------------------------

_VERB_AT = re.compile(r"GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS")
_ERROR_AT = re.compile(r"E[A-Z]{3}|ERR_|NS_ERROR_|HTTP [45]|Error|Exception")
_DOT_BEFORE_DIGIT = re.compile(r"\.(?=\d)")
_NAME_RUN = re.compile(r"[\w@/.-]*")  # the class of the lookbehinds of _PKG_VERSION, _FILE
_LETTER_RUN = re.compile(r"[A-Za-z]*")
_NAME_START = re.compile(r"\b[A-Za-z]")
_NAMED_NAME_RUN = re.compile(r"[\w.+-]*")  # the characters of the names of _NAMED_VERSION
_HTTP_VERB_SCAN = LiteralScan(_HTTP_VERBS)
# the same answers as re on ASCII text (the ASCII digits and word characters of both):
_DIGIT_DOT_ASCII = rust_search(r"[0-9]\.[0-9]").isinstance_python
_FILE_HINT_ASCII = rust_search(_FILE_HINT.pattern).isinstance_python
# the same answers as re on any text the engine reads (literals and ASCII ranges):
_ERROR_AT_RUST = rust_search(_ERROR_AT.pattern)
_NAMED_NAME_MAX = 32  # [A-Z][A-Za-z][\w.+-]{0,30}; the literal names are shorter


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """``list(pattern.finditer(text))`` when every position at which ``pattern.match``
    succeeds is in ``starts`` (a pattern that never matches the empty string)."""
    out: list[re.Match[str]] = []
    end = 0
    match = pattern.match
    for s in sorted(set(starts)):
        if s >= end and (m := match(text, s)) is not None:
            out.append(m)
            end = m.end()
    return out


def _replaced(text: str, matches: list[re.Match[str]]) -> str:
    """``pattern.sub(" ", text)`` given ``matches``, the (non-empty) matches of
    ``pattern.finditer(text)``."""
    if not matches:
        return text
    pieces: list[str] = []
    pos = 0
    for m in matches:
        pieces.append(text[pos : m.start()])
        pos = m.end()
    pieces.append(text[pos:])
    return " ".join(pieces)


def _digit_dots(text: str) -> list[int]:
    """Every ``p`` (ascending, overlapping ones too) with ``text[p - 1:p + 2]`` matching
    ``\\d\\.\\d`` (``str.isdecimal`` is ``\\d`` of ``re``: Unicode category Nd)."""
    out: list[int] = []
    for m in _DOT_BEFORE_DIGIT.finditer(text):
        p = m.start()
        if p and text[p - 1].isdecimal():
            out.append(p)
    return out


def _digit_run_start(text: str, p: int) -> int:
    """Start of the run of digits ending at ``p - 1`` (``text[p - 1]`` is a digit)."""
    q = p - 1
    while q and text[q - 1].isdecimal():
        q -= 1
    return q


class _Back:
    """Starts of runs of a character class ending before given positions, read right to
    left with the class's pattern on the reversed text (reversed once, when needed)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._rev: str | None = None

    def run_starts(self, run: re.Pattern[str], ends: list[int]) -> list[int]:
        """For each ``i`` of ``ends`` (ascending): the start of the longest run of
        characters matched by ``run`` (``[class]*``) ending at ``i - 1`` (``i`` when
        ``text[i - 1]`` is not one), each start once. A run read once serves every later
        ``i`` inside it, so the work is linear in the text."""
        text = self.text
        n = len(text)
        if self._rev is None:
            self._rev = text[::-1]
        rev = self._rev
        out: list[int] = []
        start = run_end = -1
        for i in ends:
            if start <= i <= run_end:
                continue  # text[start:i] is in the run read last: the same start
            r = n - i  # rev[r] is text[i - 1]
            start = i - (run.match(rev, r).end() - r)  # type: ignore[union-attr]
            run_end = run.match(text, start).end()  # type: ignore[union-attr]
            out.append(start)
        return out

    def run_start(self, run: re.Pattern[str], i: int, limit: int) -> int:
        """Start of the run of characters of ``run`` (``[class]*``) ending at ``i - 1``,
        at most ``limit`` characters long."""
        n = len(self.text)
        if self._rev is None:
            self._rev = self.text[::-1]
        r = n - i
        return i - (run.match(self._rev, r, r + limit).end() - r)  # type: ignore[union-attr]


def _pkg_starts(text: str, back: _Back) -> list[int]:
    """Candidate starts of ``_PKG_VERSION``: its name and separator ``@`` (followed by
    ``v?\\d``) are characters of its lookbehind's class, which the character before the
    match is not, so the match starts where the run of that class before the ``@``
    starts."""
    ats: list[int] = []
    i = text.find("@")
    while i >= 0:
        nxt = text[i + 1 : i + 3]
        if i and nxt and (nxt[0].isdecimal() or (nxt[0] == "v" and nxt[1:].isdecimal())):
            ats.append(i)
        i = text.find("@", i + 1)
    return back.run_starts(_NAME_RUN, ats)


def _named_starts(text: str, dots: list[int], back: _Back) -> list[int]:
    """Candidate starts of ``_NAMED_VERSION``. Its version starts with the run of digits
    before the first dot of a digit-dot-digit, after an optional ``v``, a separator (one
    ``/`` or a whole run of white space: names hold neither) and a name ending at the
    separator: at most 32 characters of ``[\\w.+-]``, beginning with an ASCII letter at
    a ``\\b``."""
    starts: list[int] = []
    for p in dots:
        q = _digit_run_start(text, p)
        e = q - 1 if q and text[q - 1] == "v" else q
        if not e:
            continue
        c = text[e - 1]
        if c == "/":
            t = e - 1
        elif c.isspace():  # str.isspace is \s of re
            t = e - 1
            while t and text[t - 1].isspace():
                t -= 1
        else:
            continue
        lo = back.run_start(_NAMED_NAME_RUN, t, _NAMED_NAME_MAX) if t else t
        if lo < t:
            starts.extend(m.start() for m in _NAME_START.finditer(text, lo, t))
    return starts


def _bare_starts(text: str, dots: list[int]) -> list[int]:
    """Candidate starts of ``_BARE_VERSION``: an optional ``v`` and the run of digits
    before the first dot ``p`` of a digit-dot-digit, where the next digit-dot-digit
    follows digits after ``p`` (``\\d+\\.\\d+\\.\\d``) and no ``.`` is just before the run
    (the lookbehind)."""
    starts: list[int] = []
    last = len(dots) - 1
    for k, p in enumerate(dots):
        if k == last or not text[p + 1 : dots[k + 1]].isdecimal():
            continue
        q = _digit_run_start(text, p)
        if q and text[q - 1] == ".":
            continue
        starts.append(q - 1 if q and text[q - 1] == "v" else q)
    return starts


def version_key(entity_value: str) -> tuple[str, str] | None:
    """(component name, version) of a version entity, for conflict detection."""
    if "@" in entity_value[1:]:
        name, _, ver = entity_value.rpartition("@")
        return name.lower(), ver
    if " " in entity_value:
        name, _, ver = entity_value.rpartition(" ")
        return name.lower(), ver
    return None
