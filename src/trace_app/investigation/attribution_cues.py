"""Attribution evidence: the words in a report that show where its information came from.

Pure functions, no model and no I/O beyond reading the shipped lexicons once. For a report
text, :func:`find_cues` returns spans, each with its start and end offsets, its kind and
the matched words:

- ``relay``: a reporting verb or phrase tied to a speaker ("according to ...", "X said",
  "told us", "RT @x", "in a statement");
- ``hearsay``: vague or unnamed sourcing, or the writer saying it is unconfirmed
  ("sources say", "reportedly", "not confirmed", "we have not seen her");
- ``instruction``: text addressed to the model or trying to set its answer ("ignore prior
  rules", "answer DIRECT", "System:"). It stays data; the decision rules see it;
- ``first_hand``: the writer perceived or did something themselves, found by grammar in
  the writer's own parts of the text (``writer_grammar``: "we reached the mill", "I am at
  the school", "they called us"), or said outright ("in person").

A quoted passage in the first person that the writer does not introduce as their own
words is a reproduced account, a ``relay`` cue; first-hand phrases inside quoted speech
or a retweeted part do not count.

The cue words live in one data file per language, ``cues/<language>.toml`` (see its
header for the format), so a language is added without code. :data:`LANGUAGES` lists the
ones that ship. Every shipped lexicon is applied to every text: reports mix languages,
and a cue that is present must not go unseen because of a guess about the language.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from trace_app.domain.errors import ConfigurationError
from trace_app.investigation.writer_grammar import (
    Grammar,
    GrammarError,
    borrowed_spans,
    first_hand_spans,
    reproduced_accounts,
)

LEXICON_PACKAGE = "trace_app.investigation"
LEXICON_FOLDER = "cues"
# A reporting verb is checked against the words before it in its own clause, at most
# this many characters back; a clause ends at these punctuation marks or a line break.
CLAUSE_LOOKBACK = 60
_CLAUSE_END = re.compile(r"[.;:!?,()\[\]\n\"“”]")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_WORD = re.compile(r"[\w'’-]+")
_LAST_WORD = re.compile(r"([\w'’-]+)\s+$")


class CueKind(enum.StrEnum):
    RELAY = "relay"
    HEARSAY = "hearsay"
    INSTRUCTION = "instruction"
    FIRST_HAND = "first_hand"

    @property
    def label(self) -> str:
        """How the result card names this kind of cue."""
        return CUE_LABELS[self]


CUE_LABELS: dict[CueKind, str] = {
    CueKind.RELAY: "passed on from someone else",
    CueKind.HEARSAY: "vague or unconfirmed sourcing",
    CueKind.INSTRUCTION: "text addressed to the model",
    CueKind.FIRST_HAND: "the writer's own account",
}

# Kinds that stop a DIRECT label from completing (the evidence rule in rules.py).
CAUTION_KINDS: frozenset[CueKind] = frozenset({CueKind.RELAY, CueKind.HEARSAY, CueKind.INSTRUCTION})


@dataclass(frozen=True, slots=True)
class Cue:
    """One span of the report text: ``text[start:end] == words``."""

    start: int
    end: int
    kind: CueKind
    words: str
    language: str

    def as_json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "kind": self.kind.value,
            "words": self.words,
            "language": self.language,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cue:
        return cls(
            start=int(data["start"]),
            end=int(data["end"]),
            kind=CueKind(data["kind"]),
            words=str(data["words"]),
            language=str(data.get("language", "")),
        )


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: CueKind
    regex: re.Pattern[str]
    speaker_verb: bool
    negatable: bool  # no cue when negated earlier in its clause ("no la hemos visto")
    exact: bool  # matched against the text as written, not the lower-cased text
    not_after: frozenset[str]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The cues of one language, compiled."""

    language: str
    patterns: tuple[_Pattern, ...]
    first_person: frozenset[str]
    negations: frozenset[str]
    grammar: Grammar | None = None


class LexiconError(ConfigurationError):
    """A shipped or supplied lexicon file is not valid (the message says where)."""

    code = "lexicon_invalid"


def parse_lexicon(text: str, *, where: str) -> Lexicon:
    """A lexicon from the text of one ``cues/*.toml`` file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LexiconError(f"{where}: not TOML ({error})") from None
    language = data.get("language")
    if not isinstance(language, str) or not language:
        raise LexiconError(f"{where}: 'language' must be a non-empty string")
    patterns = []
    for number, entry in enumerate(data.get("cue", []), start=1):
        try:
            kind = CueKind(entry["kind"])
            regex = re.compile(entry["pattern"])
        except (KeyError, ValueError, re.error) as error:
            raise LexiconError(f"{where}: cue {number}: {error}") from None
        exact = bool(entry.get("exact", False))
        outside_escapes = re.sub(r"\\.", "", regex.pattern)
        if not exact and outside_escapes != outside_escapes.lower():
            raise LexiconError(
                f"{where}: cue {number}: a pattern is matched against the lower-cased text; "
                "write it in lower case or set exact = true"
            )
        patterns.append(
            _Pattern(
                kind,
                regex,
                speaker_verb=bool(entry.get("speaker_verb", False)),
                negatable=bool(entry.get("negatable", False)),
                exact=exact,
                not_after=frozenset(w.lower() for w in entry.get("not_after", [])),
            )
        )
    if not patterns:
        raise LexiconError(f"{where}: no cues")
    try:
        grammar = Grammar.from_table(data["grammar"], where=where) if "grammar" in data else None
    except GrammarError as error:
        raise LexiconError(str(error)) from None
    return Lexicon(
        language=language,
        patterns=tuple(patterns),
        first_person=frozenset(w.lower() for w in data.get("first_person", [])),
        negations=frozenset(w.lower() for w in data.get("negations", [])),
        grammar=grammar,
    )


@functools.cache
def _shipped_files() -> tuple[tuple[str, str], ...]:
    """Each ``cues/*.toml`` file's name and text, sorted by name (read once)."""
    folder = resources.files(LEXICON_PACKAGE).joinpath(LEXICON_FOLDER)
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    return tuple((f.name, f.read_text("utf-8")) for f in files)


@functools.cache
def shipped_lexicons() -> tuple[Lexicon, ...]:
    """Every lexicon in ``cues/``, sorted by file name."""
    return tuple(parse_lexicon(text, where=name) for name, text in _shipped_files())


@functools.cache
def shipped_lexicons_digest() -> str:
    """12 hex digits naming the shipped lexicons' exact words: a decision stored with other
    cue words is made again (``rules.decision_version``)."""
    digest = hashlib.sha256()
    for name, text in _shipped_files():
        digest.update(f"{name}\0{text}\0".encode())
    return digest.hexdigest()[:12]


def languages() -> tuple[str, ...]:
    """The languages whose cue lexicons ship."""
    return tuple(lexicon.language for lexicon in shipped_lexicons())


def find_cues(text: str, lexicons: Sequence[Lexicon] | None = None) -> tuple[Cue, ...]:
    """Every cue in ``text``, in text order (by start, then end, then kind).

    Spans of one kind never overlap: where two patterns of the same kind match
    overlapping words, the longer (then the earlier) span is kept.
    """
    lowered = _lower_keeping_offsets(text)
    borrowed = borrowed_spans(text)
    found: list[Cue] = []
    for lexicon in shipped_lexicons() if lexicons is None else lexicons:
        if lexicon.grammar is not None:
            found += _grammar_cues(text, lexicon.grammar, lexicon.language, borrowed)
        for pattern in lexicon.patterns:
            for match in pattern.regex.finditer(text if pattern.exact else lowered):
                start, end = match.span()
                if start == end:
                    continue
                start, end = _trim(text, start, end)
                if start == end:
                    continue
                if pattern.not_after and _word_before(lowered, start) in pattern.not_after:
                    continue
                if pattern.speaker_verb and _writer_or_negated(lowered, start, lexicon):
                    continue
                if pattern.negatable and _negated(lowered, start, lexicon):
                    continue
                if pattern.kind is CueKind.FIRST_HAND and _within(borrowed, start):
                    continue  # a first-hand phrase in someone else's words
                found.append(Cue(start, end, pattern.kind, text[start:end], lexicon.language))
    introduced = _introduced_passages(text, found)
    if introduced:
        found = [
            c for c in found if not (c.kind is CueKind.FIRST_HAND and _within(introduced, c.start))
        ]
    return _without_overlaps(found)


_PARAGRAPH_END = re.compile(r"\n\s*\n")


def _introduced_passages(text: str, cues: Sequence[Cue]) -> list[tuple[int, int]]:
    """What follows a relay cue and a colon in the same sentence ("Below is her account
    of the night: we climbed ..."): someone else's words, to the end of the paragraph."""
    spans = []
    for cue in cues:
        if cue.kind is not CueKind.RELAY:
            continue
        sentence_end = _SENTENCE_END.search(text, cue.end)
        limit = sentence_end.start() if sentence_end else len(text)
        colon = text.find(":", cue.end, limit)
        if colon == -1:
            continue
        paragraph = _PARAGRAPH_END.search(text, colon)
        spans.append((colon, paragraph.start() if paragraph else len(text)))
    return spans


def _grammar_cues(
    text: str, grammar: Grammar, language: str, borrowed: Sequence[tuple[int, int]]
) -> list[Cue]:
    spans = [(CueKind.FIRST_HAND, span) for span in first_hand_spans(text, grammar, borrowed)]
    spans += [(CueKind.RELAY, span) for span in reproduced_accounts(text, grammar)]
    return [Cue(s, e, kind, text[s:e], language) for kind, (s, e) in spans]


def _within(spans: Sequence[tuple[int, int]], offset: int) -> bool:
    return any(start <= offset < end for start, end in spans)


def _lower_keeping_offsets(text: str) -> str:
    """``text.lower()``, except that a character whose lower case is longer (such as "İ")
    stays as it is, so every offset in the result is an offset in ``text``."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def _word_before(lowered: str, start: int) -> str:
    """The word right before ``start`` (only white space between), or ``""``."""
    match = _LAST_WORD.search(lowered, max(0, start - CLAUSE_LOOKBACK), start)
    return match.group(1) if match else ""


def caution_cues(cues: Iterable[Cue]) -> tuple[Cue, ...]:
    """The relay, hearsay and instruction cues, in text order."""
    return tuple(c for c in cues if c.kind in CAUTION_KINDS)


def first_hand_cues(cues: Iterable[Cue]) -> tuple[Cue, ...]:
    return tuple(c for c in cues if c.kind is CueKind.FIRST_HAND)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the white space (or a leading non-word character) a pattern's
    boundary group took in."""
    while start < end and not (text[start].isalnum() or text[start] in "@<[{}/\"'`"):
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _clause_words(lowered: str, start: int) -> list[str]:
    """The words before ``start`` in its own clause (at most CLAUSE_LOOKBACK back)."""
    window = lowered[max(0, start - CLAUSE_LOOKBACK) : start]
    breaks = [m.end() for m in _CLAUSE_END.finditer(window)]
    if breaks:
        window = window[breaks[-1] :]
    return [w.replace("’", "'") for w in _WORD.findall(window)]


def _negated(lowered: str, start: int, lexicon: Lexicon) -> bool:
    """Whether a negation word comes earlier in the clause of the match at ``start``."""
    return _any_negation(_clause_words(lowered, start), lexicon)


def _any_negation(words: list[str], lexicon: Lexicon) -> bool:
    return any(w in lexicon.negations or w.endswith("n't") for w in words)


def _writer_or_negated(lowered: str, start: int, lexicon: Lexicon) -> bool:
    """Whether the reporting verb at ``start`` is the writer's own (its clause's subject,
    the last word before it after auxiliaries and adverbs, is first person) or negated
    earlier in its clause."""
    words = _clause_words(lowered, start)
    if _any_negation(words, lexicon):
        return True
    for word in reversed(words):
        if word in lexicon.first_person:
            return True
        if word in _AUXILIARIES or word.endswith("ly"):
            continue
        return False
    return False


# Words that may stand between a subject and its verb ("I have just told her").
_AUXILIARIES = frozenset(
    {
        "have", "has", "had", "am", "is", "are", "was", "were", "will", "would", "shall",
        "should", "did", "do", "does", "also", "then", "just", "already", "myself",
        "ourselves", "both", "all", "first", "once", "again", "still", "even", "can", "could",
        "must", "may", "might", "personally", "too",
    }
)  # fmt: skip


def _without_overlaps(cues: list[Cue]) -> tuple[Cue, ...]:
    by_kind: dict[CueKind, list[Cue]] = {}
    for cue in sorted(cues, key=lambda c: (c.start, -(c.end - c.start))):
        kept = by_kind.setdefault(cue.kind, [])
        if kept and cue.start < kept[-1].end:
            if cue.end - cue.start > kept[-1].end - kept[-1].start:
                kept[-1] = cue
            continue
        kept.append(cue)
    merged = [cue for kept in by_kind.values() for cue in kept]
    return tuple(sorted(merged, key=lambda c: (c.start, c.end, c.kind.value)))
