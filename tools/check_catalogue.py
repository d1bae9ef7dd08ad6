"""Trace's message catalogue (issue 42): extract, update, check.

    python tools/check_catalogue.py            # check (make lint): exit 1 on any problem
    python tools/check_catalogue.py --update   # extract again and merge into every .po

What is extracted (the catalogue's message ids are the English words):
- every template under src/trace_app/web/templates (Jinja2's i18n extension: ``_()``,
  ``gettext``, ``ngettext``, ``{% trans %}``),
- the Python modules that put words on pages or in mail (:data:`PY_GLOBS`: ``_()``,
  ``ngettext``, ``N_()``, ``lazy_gettext``),
- the glossary (:func:`trace_app.glossary.catalogue_messages`) and the word tables of
  other modules that pages pass through ``_()`` (:data:`WORD_TABLES`),
- the catalogue's own words (``trace_app.i18n.formats``).

The check fails when (1) the catalogue on disk is not what extraction gives (a message
missing, or an obsolete one kept), (2) a template holds English text outside ``_()`` /
``{% trans %}`` (a heuristic over text nodes and the attributes people read: ``title``,
``placeholder``, ``aria-label``, ``alt``; ``<code>``, ``<script>``, ``<style>`` and Jinja
expressions are data or code), or (3) a ``ne``, ``es`` or ``ar`` entry is untranslated or
fuzzy, or drops a placeholder its English has.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract, extract_from_file
from babel.messages.pofile import read_po, write_po
from jinja2.ext import babel_extract

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "trace_app"
TEMPLATES = PACKAGE / "web" / "templates"
LOCALE = PACKAGE / "locale"
LANGUAGES = ("ne", "es", "ar")
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
    "N_": None,
    "lazy_gettext": None,
}
JINJA_OPTIONS = {"extensions": "jinja2.ext.i18n", "trimmed": "true", "newstyle_gettext": "true"}
# the Python modules that put words on pages or in mail
PY_GLOBS = (
    "web/*/routes.py",
    "web/*/*_routes.py",
    "web/*/views.py",
    "web/*/*_view.py",
    "web/failures.py",
    "web/errors.py",
    "web/auth.py",
    "web/deps.py",
    "web/paging.py",
    "web/reports/forms.py",
    "notifications/mail*.py",
    "notifications/*/mail*.py",
)
# (module, name): tables of English words that templates pass through _() as values
WORD_TABLES = (
    ("trace_app.investigation.review_queue", "REASON_WORDS"),
    ("trace_app.domain.reviews", "PRIORITY_WORDS"),
    ("trace_app.domain.reviews", "REVIEW_WORDS"),
    ("trace_app.domain.alert_actions", "REASON_WORDS"),
    ("trace_app.investigation.vocabulary", "STATUS_MEANINGS"),
    ("trace_app.investigation.vocabulary", "STATUS_HEADLINES"),
    ("trace_app.investigation.vocabulary", "NEXT_STEPS"),
    ("trace_app.investigation.vocabulary", "REFUSAL_NEXT_STEPS"),
    ("trace_app.investigation.vocabulary", "MODE_MEANINGS"),
    ("trace_app.investigation.vocabulary", "MODE_LABELS"),
    ("trace_app.investigation.attribution_cues", "CUE_LABELS"),
    ("trace_app.web.interchange.page_routes", "EXPORT_FORMATS"),
    ("trace_app.web.accounts.audit_view", "ACTIONS"),
    ("trace_app.web.accounts.audit_view", "OUTCOMES"),
    ("trace_app.web.reports.forms", "AGE_MESSAGE"),
    ("trace_app.web.reports.forms", "STATUS_MESSAGE"),
    ("trace_app.domain.errors", "EMPTY_REPORT_MESSAGE"),
    ("trace_app.domain.errors", "NotSignedInError.MESSAGE"),
)
OWN_WORDS = ("{date}, {clock} ({zone})",)
# words other modules build inline and templates pass through tr(): (origin, words)
VALUE_WORDS = (
    ("src/trace_app/domain/import_runs.py", "PFIF document"),
    ("src/trace_app/domain/import_runs.py", "Shelter list (CSV)"),
    ("src/trace_app/web/incidents/views.py", "UTC (no local time)"),
)
HEADER_COMMENT = (
    "Trace's interface words. Translations are the project's own: see docs/languages.md\n"
    "for the glossary of terms and who reviews a language before a deployment."
)


# --- extraction -----------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from _strings(getattr(value, name))


def table_messages() -> Iterator[tuple[str | tuple[str, str], str]]:
    from trace_app import glossary

    for message in glossary.catalogue_messages():
        yield message, "src/trace_app/glossary.py"
    for module_name, name in WORD_TABLES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        table: Any = module
        for part in name.split("."):
            table = getattr(table, part, None)
        if table is None:
            continue
        origin = "src/" + module_name.replace(".", "/") + ".py"
        for message in _strings(table):
            yield message, origin
    for message in OWN_WORDS:
        yield message, "src/trace_app/i18n/formats.py"
    for origin, message in VALUE_WORDS:
        yield message, origin


def python_files() -> list[Path]:
    found: set[Path] = set()
    for pattern in PY_GLOBS:
        found.update(PACKAGE.glob(pattern))
    return sorted(found)


def template_files() -> list[Path]:
    return sorted(TEMPLATES.rglob("*.html"))


def extract_catalog() -> Catalog:
    catalog = Catalog(project="Trace", header_comment=HEADER_COMMENT, fuzzy=False)
    for path in template_files():
        rel = str(path.relative_to(ROOT))
        with path.open("rb") as handle:
            for lineno, message, comments, context in extract(
                babel_extract, handle, keywords=KEYWORDS, options=JINJA_OPTIONS
            ):
                catalog.add(
                    message, locations=[(rel, lineno)], auto_comments=comments, context=context
                )
    for path in python_files():
        rel = str(path.relative_to(ROOT))
        for lineno, message, comments, context in extract_from_file(
            "python", str(path), keywords=KEYWORDS
        ):
            catalog.add(message, locations=[(rel, lineno)], auto_comments=comments, context=context)
    for message, origin in table_messages():
        if isinstance(message, tuple) or message.strip():
            catalog.add(message, locations=[(origin, 0)])
    return catalog


def po_file(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / "messages.po"


def read(lang: str) -> Catalog:
    with po_file(lang).open("rb") as handle:
        return read_po(handle, locale=lang)


def write(lang: str, catalog: Catalog) -> None:
    path = po_file(lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=100, sort_output=True, include_lineno=False)


def update() -> None:
    template = extract_catalog()
    for lang in LANGUAGES:
        if po_file(lang).exists():
            catalog = read(lang)
            catalog.update(template, no_fuzzy_matching=True)
            catalog.obsolete.clear()
        else:
            catalog = Catalog(locale=lang, project="Trace", header_comment=HEADER_COMMENT)
            catalog.update(template, no_fuzzy_matching=True)
        write(lang, catalog)


# --- checks ---------------------------------------------------------------------------

_JINJA = re.compile(r"{#.*?#}|{%.*?%}|{{.*?}}", re.S)
_SKIP_BLOCK = re.compile(r"<(code|script|style)\b.*?</\1>", re.S | re.I)
_TRANS = re.compile(r"{%-?\s*trans\b.*?{%-?\s*endtrans\s*-?%}", re.S)
_ATTRS = re.compile(r'\b(?:title|placeholder|aria-label|alt)="([^"]*)"')
_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"[A-Za-z]{2,}")
_ENTITY = re.compile(r"&\w+;")
_ATTR_TEXT = re.compile(r'[\w-]+="[^"]*"')
# names, not words to translate: the product, file formats
ALLOWED_WORDS = frozenset({"Trace", "PFIF", "CSV", "UTF"})


_URL = re.compile(r"\w+://\S+")


def _has_words(text: str) -> bool:
    return any(w not in ALLOWED_WORDS for w in _WORD.findall(_URL.sub(" ", text)))


def bare_text(source: str) -> list[str]:
    """Text a person reads that is not inside _() or {% trans %} (a heuristic)."""
    source = _TRANS.sub(" ", source)
    source = _SKIP_BLOCK.sub(" ", source)
    found: list[str] = []
    for value in _ATTRS.findall(source):
        if _has_words(_JINJA.sub(" ", value)):
            found.append(value)
    text = _TAG.sub(" ", _JINJA.sub(" ", source))
    text = _ENTITY.sub(" ", _ATTR_TEXT.sub(" ", text))
    for line in text.splitlines():
        line = line.strip()
        if _has_words(line):
            found.append(line)
    return found


_PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")


def placeholders(text: str) -> set[str]:
    return {a or b for a, b in _PLACEHOLDER.findall(text)}


def _msgstrs(message: Any) -> list[str]:
    if isinstance(message.string, (list, tuple)):
        return list(message.string)
    return [message.string]


def problems() -> list[str]:
    found: list[str] = []
    for path in template_files():
        for text in bare_text(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(ROOT)}: text outside _() or trans: {text[:80]!r}")
    template = extract_catalog()
    wanted = {m.id for m in template if m.id}
    for lang in LANGUAGES:
        if not po_file(lang).exists():
            found.append(f"{po_file(lang).relative_to(ROOT)}: missing (run --update)")
            continue
        catalog = read(lang)
        have = {m.id for m in catalog if m.id}
        for missing in sorted(map(str, wanted - have)):
            found.append(f"{lang}: not extracted yet (run --update): {missing[:80]!r}")
        for extra in sorted(map(str, have - wanted)):
            found.append(f"{lang}: obsolete (run --update): {extra[:80]!r}")
        for message in catalog:
            if not message.id:
                continue
            ident = message.id if isinstance(message.id, str) else message.id[0]
            if message.fuzzy:
                found.append(f"{lang}: fuzzy: {ident[:80]!r}")
            strings = _msgstrs(message)
            if not all(s for s in strings):
                found.append(f"{lang}: untranslated: {ident[:80]!r}")
                continue
            ids = [message.id] if isinstance(message.id, str) else list(message.id)
            needed = set().union(*(placeholders(i) for i in ids))
            for translated in strings:
                lost = needed - placeholders(translated) - {"num"}
                if lost:
                    found.append(f"{lang}: placeholder {sorted(lost)} missing: {ident[:60]!r}")
    return found


def counts() -> dict[str, tuple[int, int]]:
    """Messages and untranslated entries per catalogue."""
    result = {}
    for lang in LANGUAGES:
        catalog = read(lang)
        messages = [m for m in catalog if m.id]
        untranslated = sum(1 for m in messages if m.fuzzy or not all(_msgstrs(m)))
        result[lang] = (len(messages), untranslated)
    return result


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--update", action="store_true", help="extract and merge into the .po files"
    )
    parser.add_argument("--counts", action="store_true", help="print messages per catalogue")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.update:
        update()
    if args.counts:
        for lang, (total, untranslated) in counts().items():
            print(f"{lang}: {total} messages, {untranslated} untranslated")
    found = problems()
    for problem in found:
        print(problem)
    if found:
        print(f"catalogue check: {len(found)} problem(s)", file=sys.stderr)
        return 1
    print("catalogue check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
