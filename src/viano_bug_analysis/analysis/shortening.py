"""Shortening an oversized context: the largest common text cap that makes it fit.

The rule (described in ``prompt_builder``): every shortenable text longer than the cap
keeps its first ``cap`` characters plus ``" [cut: N characters in all]"``, and its entry
lists it under ``shortened`` (``field``, ``chars``, ``sha256``). The cap is found by a
binary search between 0 and the longest text, keeping the last cap whose context fits.

Speed without a second rule: the search never serialises a candidate context. The
canonical JSON of a context is a concatenation, so the size of a candidate is the whole
context's size plus, for each text longer than the cap, the difference between its
shortened and whole serialised forms, plus one ``"shortened":[...]`` list per entry
that has such a text (the length of each mark is known in advance: ``sha256`` is 64 hex
digits). ``shortened_context`` walks the same binary search on these computed sizes,
serialises the chosen context once and checks its size against the computed one; a
difference (never seen) falls back to serialising each candidate, so the result is
always the search's result on real bytes. The whole context's size itself is measured
the same way where the caller has not serialised it (``_measured``: the context with
its texts emptied, plus each text's serialised size).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Mapping
from typing import Any

from viano_bug_analysis.packages import canonical_json
from viano_bug_analysis.packages.threads import background_pool

REFERENCE_FIELDS = ("cites", "value_ref", "unread_refs", "mentions", "derived_from", "steps")
_PARALLEL_HASH_CHARS = 1 << 20
_SHORTENED_KEY = len(',"shortened":[]')
_MARK_FIXED = len('{"chars":,"field":"","sha256":""}') + 64


def _marker(length: int) -> str:
    return f" [cut: {length} characters in all]"


def _marker_size(length: int) -> int:
    return len(" [cut:  characters in all]") + len(str(length))


def _pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _field(path: tuple[str, ...]) -> str:
    return "".join("/" + _pointer_token(p) for p in path)


def _serialised_size(text: str) -> int:
    """Bytes of ``text`` inside its quotes in canonical JSON."""
    return len(canonical_json(text)) - 2


def longest_text(value: Any, path: tuple[str, ...] = ()) -> int:
    """The length of the longest shortenable text under ``value`` (reference fields,
    which hold catalogue ids, are never shortened)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return max((longest_text(v, path) for v in value), default=0)
    if isinstance(value, Mapping):
        return max(
            (
                longest_text(v, (*path, str(k)))
                for k, v in value.items()
                if not (not path and k in REFERENCE_FIELDS)
            ),
            default=0,
        )
    return 0


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _hash_all(texts: list[_Text]) -> dict[int, str]:
    # one text encoded at a time: its bytes are freed (and their memory reused) at once
    return {id(t.text): _sha256_text(t.text) for t in texts}


def _digests(texts: list[_Text]) -> Callable[[str], str]:
    """``text -> sha256`` for ``texts`` (kept alive by the caller), hashed ahead. Past
    1 MiB in all, half of them (by length) are hashed in the background pool while this
    thread hashes the other half: hashlib releases the GIL on large inputs."""
    total = sum(t.length for t in texts)
    if total < _PARALLEL_HASH_CHARS:
        known = _hash_all(texts)
    else:
        split, running = 0, 0
        while running < total // 2:
            running += texts[split].length
            split += 1
        other = background_pool().submit(_hash_all, texts[split:])
        known = _hash_all(texts[:split])
        known.update(other.result())
    return lambda text: known.get(id(text)) or _sha256_text(text)


def shorten_entry(
    entry: dict[str, Any], cap: int, digest: Callable[[str], str] = _sha256_text
) -> dict[str, Any]:
    """``entry`` with every text longer than ``cap`` characters shortened and listed
    under ``shortened`` (``digest`` gives a text's hex SHA-256); the same object when
    nothing is longer."""
    if longest_text(entry["data"]) <= cap:
        return entry
    return _shorten(entry, cap, digest)


def _shorten(entry: dict[str, Any], cap: int, digest: Callable[[str], str]) -> dict[str, Any]:
    """``shorten_entry`` for an entry known to have a text longer than ``cap``."""
    marks: list[dict[str, Any]] = []

    def walk(value: Any, path: tuple[str, ...]) -> Any:
        if isinstance(value, str):
            if len(value) <= cap:
                return value
            marks.append(
                {
                    "field": _field(path),
                    "chars": len(value),
                    "sha256": digest(value),
                }
            )
            return value[:cap] + _marker(len(value))
        if isinstance(value, list):
            return [walk(v, (*path, str(i))) for i, v in enumerate(value)]
        if isinstance(value, Mapping):
            return {
                k: (v if not path and k in REFERENCE_FIELDS else walk(v, (*path, k)))
                for k, v in value.items()
            }
        return value

    data = walk(entry["data"], ())
    return dict(entry, data=data, shortened=marks)


class _Text:
    """One shortenable text: what the size of a candidate needs to know about it."""

    __slots__ = ("entry", "length", "mark", "plain", "text", "whole")

    def __init__(self, text: str, whole: int, entry: int, mark: int) -> None:
        self.text = text
        self.length = len(text)  # characters
        self.whole = whole  # serialised bytes of the whole text (inside its quotes)
        self.plain = whole == self.length  # one byte per character: a prefix of c is c
        self.entry = entry  # index of its catalogue entry
        self.mark = mark  # serialised bytes of its ``shortened`` mark


def _texts(entries: list[dict[str, Any]]) -> list[_Text]:
    """Every non-empty shortenable text of ``entries``, longest first."""
    out: list[_Text] = []
    marks: dict[tuple[str, ...], int] = {}  # path -> mark size less the length's digits

    def walk(value: Any, path: tuple[str, ...], index: int) -> None:
        if isinstance(value, str):
            if value:
                mark = marks.get(path)
                if mark is None:
                    mark = marks[path] = _MARK_FIXED + _serialised_size(_field(path))
                whole = _serialised_size(value)
                out.append(_Text(value, whole, index, mark + len(str(len(value)))))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, str(i)), index)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                if not (not path and k in REFERENCE_FIELDS):
                    walk(v, (*path, k), index)

    for index, entry in enumerate(entries):
        walk(entry["data"], (), index)
    out.sort(key=lambda t: -t.length)
    return out


def _emptied(value: Any, top: bool = False) -> Any:
    """``value`` with every shortenable text replaced by ``""`` (the texts ``_texts``
    lists). Only plain dicts, lists and strings are walked; anything else that
    ``_texts`` would walk raises ``TypeError`` (the caller serialises the whole)."""
    cls = type(value)
    if cls is str:
        return ""
    if cls is list:
        return [_emptied(v) for v in value]
    if cls is dict:
        return {k: (v if top and k in REFERENCE_FIELDS else _emptied(v)) for k, v in value.items()}
    if isinstance(value, (str, list, Mapping)):
        raise TypeError("not measured by parts")
    return value


def _measured(context: dict[str, Any]) -> tuple[list[_Text] | None, int]:
    """The texts of ``context`` and the length of its canonical JSON, without
    serialising it whole: canonical JSON is a concatenation, so a text's value adds
    exactly its serialised bytes to the context with that text emptied. Where anything
    cannot be measured so, the whole context is serialised (raising what it raises)."""
    entries: list[dict[str, Any]] = context["catalogue"]
    try:
        texts = _texts(entries)
        emptied = [dict(e, data=_emptied(e["data"], True)) for e in entries]
        return texts, len(canonical_json(dict(context, catalogue=emptied))) + sum(
            t.whole for t in texts
        )
    except Exception:
        return None, len(canonical_json(context))


def _size_function(
    whole_size: int, entries: list[dict[str, Any]], texts: list[_Text] | None = None
) -> tuple[Callable[[int], int], list[_Text]]:
    """``cap -> len(canonical_json(context shortened at cap))`` without serialising, and
    the texts it knows (longest first).

    With the texts longest first, the texts longer than ``cap`` are the first ``k``.
    What does not depend on ``cap`` is summed once per ``k``: per text its marker less
    its whole serialised form, plus its mark and one comma; per entry that has such a
    text one ``,"shortened":[]`` less one comma (n marks need n - 1 commas). ``cap``
    adds ``cap`` bytes per one-byte-per-character text and the serialised prefix of
    every other one. ``texts``: ``_texts(entries)`` where already listed."""
    if texts is None:
        texts = _texts(entries)
    negated = [-t.length for t in texts]  # ascending, for bisect
    fixed = [0]  # fixed[k]: the cap-independent bytes of the first k texts
    plain = [0]  # plain[k]: how many of the first k texts are one byte per character
    others = [0]  # others[k]: how many of the first k texts are in ``multibyte``
    multibyte = [t.text for t in texts if not t.plain]
    seen: set[int] = set()
    for text in texts:
        step = _marker_size(text.length) - text.whole + text.mark + 1
        if text.entry not in seen:
            seen.add(text.entry)
            step += _SHORTENED_KEY - 1
        fixed.append(fixed[-1] + step)
        plain.append(plain[-1] + text.plain)
        others.append(others[-1] + (not text.plain))

    def size(cap: int) -> int:
        k = bisect_left(negated, -cap)  # the texts longer than cap
        prefixes = sum(_serialised_size(text[:cap]) for text in multibyte[: others[k]])
        return whole_size + fixed[k] + cap * plain[k] + prefixes

    return size, texts


def _binary_search(fits: Callable[[int], bool], longest: int) -> int:
    """The search's cap: ``fits(0)`` holds; the last middle found to fit, else 0."""
    low, high = 0, longest
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


def _candidate(
    context: dict[str, Any],
    cap: int,
    digest: Callable[[str], str] = _sha256_text,
    cut: set[int] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """The context shortened at ``cap`` and its bytes. ``cut``, where given, holds the
    indices of the entries that have a text longer than ``cap`` (from ``_texts``, which
    walks the texts ``longest_text`` does)."""
    if cut is None:
        entries = [shorten_entry(e, cap, digest) for e in context["catalogue"]]
    else:
        entries = [
            _shorten(e, cap, digest) if i in cut else e for i, e in enumerate(context["catalogue"])
        ]
    shortened = dict(context, catalogue=entries)
    return shortened, canonical_json(shortened)


def shortened_context(
    context: dict[str, Any], whole_size: int | None, limit: int
) -> tuple[dict[str, Any], bytes, int]:
    """The context shortened at the search's cap, its bytes and the whole context's
    size (``whole_size``, or measured by ``_measured`` where None). When even shortening
    every text to nothing leaves it over ``limit``, that floor context is returned (the
    caller refuses it)."""
    entries: list[dict[str, Any]] = context["catalogue"]
    listed = None
    if whole_size is None:
        listed, whole_size = _measured(context)
    size, texts = _size_function(whole_size, entries, listed)
    longest = texts[0].length if texts else 0  # longest_text of every entry, at most
    if size(0) <= limit:
        cap = _binary_search(lambda c: size(c) <= limit, longest)
        longer = texts[: bisect_left([-t.length for t in texts], -cap)]
        cut = {t.entry for t in longer}
        shortened, body = _candidate(context, cap, _digests(longer), cut)
        if len(body) == size(cap):
            return shortened, body, whole_size
    # the exact, slow search on real bytes: only if a computed size ever missed
    floor = _candidate(context, 0)
    if len(floor[1]) > limit:
        return (*floor, whole_size)
    cap = _binary_search(lambda c: len(_candidate(context, c)[1]) <= limit, longest)
    return (*_candidate(context, cap), whole_size)
