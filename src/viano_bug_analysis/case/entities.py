"""Entity rules of CaseBuilder: components, versions, endpoints, files, error codes.

Simple pattern rules, each written once (docs/intake-format.md lists them).
"""

from __future__ import annotations

import re

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
_FILE_EXTENSIONS = (
    r"(?:jsx?|tsx?|mjs|cjs|json|py|rb|go|rs|java|kt|c|cc|cpp|h|hpp|cs|css|scss|less|html?"
    r"|vue|svelte|ya?ml|toml|lock|sh|xml|gradle|php|swift|sql|ini|cfg|conf|log)"
)
_FILE = re.compile(rf"(?<![\w/.@-])(?P<f>(?:[\w.-]+/)*[\w-][\w.-]*\.{_FILE_EXTENSIONS})\b")
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
_ERROR_CODE_STOP = {"EACH", "ELSE", "EDIT", "EVEN", "EVER", "EXIT", "ETC", "EVERY", "EXACT"}
_DIGIT_DOT = re.compile(r"\d\.\d")
_FILE_HINT = re.compile(rf"\.{_FILE_EXTENSIONS}\b")
_ERROR_HINT = re.compile(r"Error|Exception|ERR_|HTTP [45]|E[A-Z]{3}")
_ALL_DIGITS_AND_DOTS = re.compile(r"[\d.]+")


def extract_entities(text: str) -> list[tuple[str, str]]:
    """(entity_type, value) pairs found in ``text``, in rule order (may repeat):

    - ``endpoint``: each URL (trailing ``.,;:!?`` cut), then, in the text without URLs,
      each HTTP verb followed by a space and a path (``GET /api/export``);
    - ``component`` and ``version``: ``name@1.2.3`` gives both; ``Name 1.2`` or
      ``node/v18.1`` a version with its name (``_NOT_NAMES`` name nothing); a bare
      ``1.2.3`` a version unless it is one of a named version;
    - ``file``: a path ending in a known source, config or log extension, other than
      library names such as ``node.js`` and names made only of digits and dots;
    - ``error_code``: ``EACCES``, ``ERR_X``, ``TypeError``, ``NS_ERROR_X``, ``HTTP 404``
      (a few words such as ``EACH`` are none).

    Each rule runs only when its hint (``://``, a verb and a space, a digit-dot-digit,
    ``@``, a file extension, an error word) is in the text."""
    found: list[tuple[str, str]] = []
    no_urls = text
    if "://" in text:
        for m in _URL.finditer(text):
            found.append(("endpoint", m.group(0).rstrip(".,;:!?")))
        no_urls = _URL.sub(" ", text)
    if any(verb in no_urls for verb in _HTTP_VERBS):
        for m in _HTTP_PATH.finditer(no_urls):
            found.append(("endpoint", m.group(0)))
    if _DIGIT_DOT.search(no_urls):
        without_pkg = no_urls
        if "@" in no_urls:
            for m in _PKG_VERSION.finditer(no_urls):
                found.append(("component", m.group("name")))
                found.append(("version", f"{m.group('name')}@{m.group('ver')}"))
            without_pkg = _PKG_VERSION.sub(" ", no_urls)
        named = set()
        for m in _NAMED_VERSION.finditer(no_urls):
            found.append(("version", f"{m.group('name')} {m.group('ver')}"))
            named.add(m.group("ver"))
        for m in _BARE_VERSION.finditer(without_pkg):
            if m.group("ver") not in named:
                found.append(("version", m.group("ver")))
    if _FILE_HINT.search(no_urls):
        for m in _FILE.finditer(no_urls):
            value = m.group("f")
            stem = value.rsplit(".", 1)[0]
            if value.lower() not in _FILE_STOP and not _ALL_DIGITS_AND_DOTS.fullmatch(stem):
                found.append(("file", value))
    if _ERROR_HINT.search(no_urls):
        for m in _ERROR_CODE.finditer(no_urls):
            if m.group("e") not in _ERROR_CODE_STOP:
                found.append(("error_code", m.group("e")))
    return found


def version_key(entity_value: str) -> tuple[str, str] | None:
    """(component name, version) of a version entity, for conflict detection."""
    if "@" in entity_value[1:]:
        name, _, ver = entity_value.rpartition("@")
        return name.lower(), ver
    if " " in entity_value:
        name, _, ver = entity_value.rpartition(" ")
        return name.lower(), ver
    return None
