"""The writer's own first-person accounts, found by grammar from closed word classes.

A clause is the writer's account when the writer is its grammatical subject ("I", "we",
"our" + a group such as "our team") or its addressee ("... called us"), and its verb
says that something happened: a past form, a perfect ("we have reached"), a progressive
or passive ("we are evacuating", "we were evacuated"), a place or state at the scene
("we are at the school", "I'm safe"), or a perception ("I can see smoke"). A modal, a
negation, a hedge or a stance in that place makes it no account ("we will send", "we did
not see her", "I hope", "I think", "we pray", "I am so sad"). Questions are skipped.

Only the writer's own parts of the text are read: quoted speech, the retweeted part of a
tweet (from ``RT @x`` on) and a forwarded part are somebody else's words. A quoted passage
that speaks in the first person, unless the writer introduces it as their own words, is a
reproduced account: relay evidence (:func:`reproduced_accounts`).

The word classes are data, the ``[grammar]`` table of a language's ``cues/*.toml``; this
module holds only the order in which they are read. No tagger or parser is used
(``docs/decisions/0071``). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trace_app.domain.errors import ConfigurationError

# Words and single marks; a word keeps its inner apostrophes ("we're", "didn't").
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]|\n")
# Marks that end the clause a subject's verb must be found in.
_CLAUSE_END = frozenset('.!?;:,()[]\n"“”«»‘’—–|')
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
# From a retweet or modified-tweet marker on, the text is the retweeted account's.
_RETWEET = re.compile(r"(?:^|(?<=\W))(?:RT|MT)\b\s*:?\s*@\w+|(?:^|(?<=\s))[\"“]@\w+\s*:")
_FORWARDED = re.compile(r"(?im)^.*\b(?:forwarded\s+message|begin\s+forwarded|forwarded\s+from)\b")
_QUOTE_PAIRS = {'"': '"', "“": "”", "«": "»", "„": "“"}
# A quoted passage opens after the start, a space or an opening bracket.
_SINGLE_OPEN = re.compile(r"(?:^|(?<=[\s(\[]))‘")
# A verb form of at least this many letters may be read as "-ed" past or "-ing".
_MIN_SUFFIXED = 4
# How many words "our" + the writer's group may span ("our teams on the ground").
_GROUP_REACH = 5


class GrammarError(ConfigurationError):
    """A ``[grammar]`` table lacks a class or holds a non-list (the message says which)."""

    code = "grammar_invalid"


@dataclass(frozen=True, slots=True)
class Grammar:
    """The closed word classes of one language (lower case). See ``cues/en.toml``."""

    subjects: frozenset[str]
    contracted: Mapping[str, str]  # "i'm" -> "be", "we've" -> "have", "i'll" -> "modal"
    group_possessives: frozenset[str]
    not_groups: frozenset[str]
    objects: frozenset[str]
    be: frozenset[str]
    have: frozenset[str]
    do: frozenset[str]
    modals: frozenset[str]
    ability: frozenset[str]
    perception: frozenset[str]
    not_perceived: frozenset[str]
    negations: frozenset[str]
    hedges: frozenset[str]
    stances: frozenset[str]
    places: frozenset[str]
    adverbs: frozenset[str]
    not_past: frozenset[str]
    irregular: frozenset[str]
    superlatives: frozenset[str]
    determiners: frozenset[str]
    prepositions: frozenset[str]
    elided: frozenset[str]
    here: frozenset[str]
    here_before: frozenset[str]
    here_after: frozenset[str]

    @classmethod
    def from_table(cls, table: Any, *, where: str) -> Grammar:
        if not isinstance(table, dict):
            raise GrammarError(f"{where}: [grammar] must be a table")
        contracted = table.get("contracted", {})
        if not isinstance(contracted, dict) or not all(
            v in {"be", "have", "modal"} for v in contracted.values()
        ):
            raise GrammarError(f"{where}: grammar.contracted maps words to be, have or modal")
        classes: dict[str, frozenset[str]] = {}
        for name in cls.__slots__:
            if name == "contracted":
                continue
            words = table.get(name)
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise GrammarError(f"{where}: grammar.{name} must be a list of words")
            classes[name] = frozenset(_normal(w) for w in words)
        return cls(contracted={_normal(k): v for k, v in contracted.items()}, **classes)

    @property
    def first_person(self) -> frozenset[str]:
        """Every word that names the writer (for quoted passages)."""
        return self.subjects | frozenset(self.contracted) | self.objects | {"my", "mine", "our"}


Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Token:
    word: str  # lower case, straight apostrophes
    start: int
    end: int
    written: str  # as in the text


def _normal(word: str) -> str:
    return word.lower().replace("’", "'")


def _tokens(text: str) -> list[_Token]:
    return [
        _Token(_normal(m.group()), m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)
    ]


# --- whose words: the writer's own parts -------------------------------------------------


def quoted_spans(text: str) -> list[Span]:
    """Quoted passages, marks included. An unclosed quote runs to the end of its line."""
    spans: list[Span] = []
    at = 0
    while at < len(text):
        opening = _next_opening(text, at)
        if opening is None:
            break
        start, closer = opening
        end = text.find(closer, start + 1)
        line_end = text.find("\n", start + 1)
        if end == -1 or (line_end != -1 and line_end < end and closer == '"'):
            end = len(text) if line_end == -1 else line_end
        else:
            end += 1
        spans.append((start, end))
        at = end
    return spans


def _next_opening(text: str, at: int) -> tuple[int, str] | None:
    found = [(i, _QUOTE_PAIRS[m]) for m in _QUOTE_PAIRS if (i := text.find(m, at)) != -1]
    single = _SINGLE_OPEN.search(text, at)
    if single:
        found.append((single.start(), "’"))
    return min(found) if found else None


def borrowed_spans(text: str) -> list[Span]:
    """The parts of ``text`` that are someone else's words: quoted passages, and from a
    retweet marker or a forwarded-message line to the end. Sorted, may overlap."""
    spans = quoted_spans(text)
    for pattern in (_RETWEET, _FORWARDED):
        match = pattern.search(text)
        if match:
            spans.append((match.start(), len(text)))
    return sorted(spans)


def _inside(spans: Sequence[Span], offset: int) -> bool:
    return any(start <= offset < end for start, end in spans)


# --- reading a clause ------------------------------------------------------------------


def _is_word(token: _Token) -> bool:
    return token.word not in _CLAUSE_END and (token.word[0].isalnum() or token.word[0] == "_")


def _past_or_participle(word: str, g: Grammar) -> bool:
    if word in g.irregular:
        return True
    return len(word) >= _MIN_SUFFIXED and word.endswith("ed") and word not in g.not_past


def _progressive(word: str) -> bool:
    return len(word) > _MIN_SUFFIXED and word.endswith("ing")


class _Reader:
    """Reads the predicate after a first-person subject, one clause at a time."""

    def __init__(self, tokens: Sequence[_Token], grammar: Grammar) -> None:
        self.tokens = tokens
        self.g = grammar

    def _skip_adverbs(self, at: int) -> int:
        g = self.g
        while at < len(self.tokens):
            word = self.tokens[at].word
            if not _is_word(self.tokens[at]):
                return at
            if word in g.adverbs or (word.endswith("ly") and len(word) > _MIN_SUFFIXED):
                at += 1
                continue
            return at
        return at

    def _word(self, at: int) -> str | None:
        if at >= len(self.tokens) or not _is_word(self.tokens[at]):
            return None
        return self.tokens[at].word

    def negated(self, word: str) -> bool:
        return word in self.g.negations or word.endswith("n't")

    def predicate(self, at: int, auxiliary: str | None = None) -> int | None:
        """The index of the word that makes the clause from ``at`` an account, or None.
        ``auxiliary`` is what a contracted subject already carried (be, have, modal)."""
        g = self.g
        seen_did = False
        while True:
            at = self._skip_adverbs(at)
            word = self._word(at)
            if word is None or self.negated(word) or word in g.hedges:
                return None
            if auxiliary == "modal":
                return None  # "I'll send", "we'd like": a plan or a wish
            if word in g.modals:
                if word not in g.ability:
                    return None
                verb_at = self._skip_adverbs(at + 1)
                return verb_at if self._perceived(verb_at) else None
            if auxiliary == "be":
                return self._after_be(at)
            if auxiliary == "have":
                if word == "been":
                    auxiliary = "be"
                    at += 1
                    continue
                if word == "to":
                    return None
                return at if _past_or_participle(word, g) else None
            if word in g.be:
                auxiliary = "be"
                at += 1
                continue
            if word in g.have:
                following = self._word(self._skip_adverbs(at + 1)) or ""
                if word == "had" and following not in {"", "been"}:
                    # "we had to climb onto the roof" and "we had a shake" happened;
                    # "we had no water" is negated
                    if not _past_or_participle(following, g):
                        return None if self.negated(following) else at
                auxiliary = "have"
                at += 1
                continue
            if word in g.do:
                seen_did = seen_did or word == "did"
                if word != "did":
                    return None  # "I do hope", "we do not": a present stance or a negation
                at += 1
                continue
            if word in g.perception:
                return at if self._perceived(at) else None
            if seen_did or _past_or_participle(word, g):
                return at
            return None

    def _perceived(self, at: int) -> bool:
        """Whether the verb at ``at`` is a verb of the senses with something perceived after
        it (not "I feel sorry", "I see that ...", "I heard about ...")."""
        word = self._word(at)
        if word is None or word not in self.g.perception:
            return False
        following = self._word(at + 1)
        if following is None:
            return True
        if following == "that" and self._word(at + 2) in {None, "one"}:
            return True  # "I felt that one", "we heard that!": a demonstrative, not "that ..."
        return following not in self.g.not_perceived and not self.negated(following)

    def _after_be(self, at: int) -> int | None:
        g = self.g
        at = self._skip_adverbs(at)
        word = self._word(at)
        if word is None or self.negated(word) or word in g.stances or word in g.hedges:
            return None
        if word in g.places:
            return at
        if word == "being" or word == "been":
            return self._after_be(at + 1)
        if word == "going" and self._word(at + 1) == "to":
            following = self._word(at + 2)
            # "we are going to the shelter" is movement; "going to send" is a plan
            return (
                at if following in {"the", "a", "an", "our", "my", "their", "his", "her"} else None
            )
        if _progressive(word) or _past_or_participle(word, g):
            return at
        return None


def _subject_auxiliary(word: str, g: Grammar) -> tuple[bool, str | None]:
    if word in g.subjects:
        return True, None
    if word in g.contracted:
        return True, g.contracted[word]
    return False, None


def first_hand_spans(
    text: str, grammar: Grammar, borrowed: Sequence[Span] | None = None
) -> list[Span]:
    """Spans from the writer (as subject or addressee) to the word that makes the clause
    an account, in the writer's own parts of ``text`` (``borrowed``: the other parts, when
    already known) and outside questions."""
    tokens = _tokens(text)
    skipped = list(borrowed_spans(text) if borrowed is None else borrowed) + [
        m.span() for m in _SENTENCE.finditer(text) if m.group().rstrip().endswith("?")
    ]
    reader = _Reader(tokens, grammar)
    spans: list[Span] = []
    for index, token in enumerate(tokens):
        if _inside(skipped, token.start):
            continue
        found = _account_at(tokens, index, reader, grammar)
        if found is not None:
            first, last = found
            spans.append((tokens[first].start, tokens[last].end))
    return spans


def _account_at(
    tokens: Sequence[_Token], index: int, reader: _Reader, g: Grammar
) -> tuple[int, int] | None:
    word = tokens[index].word
    is_subject, auxiliary = _subject_auxiliary(word, g)
    if is_subject:
        if index > 0 and tokens[index - 1].word in g.be | g.have | g.do | g.modals:
            return None  # an inverted question or "did we ...", not a statement
        if _after_superlative(tokens, index, g):
            return None  # "the worst flood I have seen": an opinion, not an account
        verb = reader.predicate(index + 1, auxiliary)
        return None if verb is None else (index, verb)
    if word in g.group_possessives:
        if index > 0 and _is_word(tokens[index - 1]):
            before = tokens[index - 1].word
            if before in g.prepositions or _past_or_participle(before, g) or reader.negated(before):
                return None  # "one of our volunteers", "phoned our desk": not the subject
        for size in range(1, _GROUP_REACH + 1):
            noun_at = index + size
            if noun_at >= len(tokens) or not _is_word(tokens[noun_at]):
                return None
            if any(tokens[i].word in g.not_groups for i in range(index + 1, noun_at + 1)):
                return None
            verb = reader.predicate(noun_at + 1)
            if verb is not None:
                return (index, verb)
        return None
    if word in g.objects and tokens[index].written != word.upper():
        return _addressee(tokens, index, reader, g)  # "US" in capitals is a country
    if word in g.here:
        return _writer_here(tokens, index, g)
    if word in g.elided and _sentence_start(tokens, index):
        verb = reader.predicate(index + 1, "be")
        return None if verb is None else (index, verb)  # "Was stranded there for hours."
    if (
        _past_or_participle(word, g)
        and word not in g.be | g.have | g.hedges
        and _sentence_start(tokens, _first_adverb(tokens, index, g))
        and _after_heading(tokens, _first_adverb(tokens, index, g))
        and index + 1 < len(tokens)
        and (tokens[index + 1].word in g.determiners or tokens[index + 1].word.isdigit())
    ):
        # a log line after its heading: "Rescue log, day 5: pulled two survivors out"
        return (_first_adverb(tokens, index, g), index)
    if (
        word in g.perception
        and _past_or_participle(word, g)  # "See the photos" is a request
        and _sentence_start(tokens, _first_adverb(tokens, index, g))
    ):
        # "Just felt that one.", "Heard a loud bang.": a sense verb with its object
        following = tokens[index + 1].word if index + 1 < len(tokens) else ""
        if following in g.determiners:
            return (_first_adverb(tokens, index, g), index)
    return None


def _writer_here(tokens: Sequence[_Token], index: int, g: Grammar) -> tuple[int, int] | None:
    """ "The road is gone over here", "no injuries here in the village": "here" as the
    writer's own place, in a sentence that holds no modal, hedge or stance before it
    ("I wish I was over here", "thoughts with everyone here in ..."). A negation does not
    stop it: "no water here in the lower town" is a state the writer is in."""
    before = tokens[index - 1].word if index > 0 else ""
    after = tokens[index + 1].word if index + 1 < len(tokens) else ""
    if before not in g.here_before and after not in g.here_after:
        return None
    first = index - 1 if before in g.here_before else index
    if _sentence_start(tokens, first):
        return None  # "Here in the valley, the council says ...": a presentative opening
    # the stances that are articles or "all" ("the road", "all of us") do not stop it
    mind = g.modals | g.hedges | (g.stances - {"a", "an", "the", "all"})
    at = first - 1
    while at >= 0 and tokens[at].word not in {".", "!", "?", "\n"}:
        if tokens[at].word in mind:
            return None
        at -= 1
    last = index + 1 if after in g.here_after else index
    return (first, last)


def _after_heading(tokens: Sequence[_Token], index: int) -> bool:
    """Whether the sentence at ``index`` follows a colon or opens a line (a log entry)."""
    return index == 0 or tokens[index - 1].word in {":", "\n"}


def _first_adverb(tokens: Sequence[_Token], index: int, g: Grammar) -> int:
    """Where the adverbs right before ``index`` begin ("just" in "just felt")."""
    while index > 0 and tokens[index - 1].word in g.adverbs:
        index -= 1
    return index


def _after_superlative(tokens: Sequence[_Token], index: int, g: Grammar) -> bool:
    for at in range(max(0, index - 4), index):
        if not _is_word(tokens[at]):
            return False
        if tokens[at].word in g.superlatives:
            return True
    return False


def _sentence_start(tokens: Sequence[_Token], index: int) -> bool:
    """At the start of the text, after a sentence mark, or after the hashtags and
    mentions that open a tweet ("#quake Just felt it"; not "@sheriff was found")."""
    if index == 0 or tokens[index - 1].word in {".", "!", "\n", ":", ";", "-", "…"}:
        return True
    while index >= 2 and tokens[index - 2].word in {"#", "@"} and _is_word(tokens[index - 1]):
        index -= 2
    return index == 0


def _addressee(
    tokens: Sequence[_Token], index: int, reader: _Reader, g: Grammar
) -> tuple[int, int] | None:
    """ "... called us", "sent us some help": the writer as the object right after a past
    verb (not negated, not after a modal)."""
    if index < 2 or not _is_word(tokens[index - 1]) or _sentence_start(tokens, index - 1):
        return None  # "Let us help", "Call me": a verb opening its sentence is a request
    verb = tokens[index - 1].word
    if not _past_or_participle(verb, g) or verb in g.hedges or verb in g.be | g.have:
        return None
    earlier = tokens[index - 2].word if index > 1 else ""
    if reader.negated(earlier) or earlier in g.modals or earlier in g.do:
        return None
    return (index - 1, index)


def reproduced_accounts(text: str, grammar: Grammar) -> list[Span]:
    """Quoted passages that speak in the first person and are not introduced as the
    writer's own words: the span of the opening mark and up to five words after it."""
    first_person = grammar.first_person
    found: list[Span] = []
    for start, end in quoted_spans(text):
        inner = _tokens(text[start + 1 : end])
        if not any(t.word in first_person for t in inner):
            continue
        if _writer_introduces(text, start, grammar):
            continue
        words = [t for t in inner if _is_word(t)][:5]
        last = start + 1 + words[-1].end if words else end
        found.append((start, last))
    return found


def _writer_introduces(text: str, quote_start: int, g: Grammar) -> bool:
    """Whether the clause right before a quotation has the writer as its subject
    ("I told her: ..."): then the quotation is the writer's own words."""
    before = text[max(0, quote_start - 60) : quote_start]
    words: list[str] = []
    for token in reversed(_tokens(before)):
        if token.word in {".", "!", "?", ";", "\n"}:
            break
        words.append(token.word)
    return any(w in g.subjects or w in g.contracted for w in words)
