"""Who a report is about: the one rule that attaches a report to a person, look-alikes.

Two people are never merged by code. A report attaches to an existing person of its
incident only on a *confident match* (:func:`match_or_create_person`):

- an explicit person chosen by whoever publishes (``person_id``), or else
- exactly one person of the incident whose name or one of whose alternate names has the
  same normalised form (:func:`trace_app.domain.text.name_key`: NFC, case-folded,
  whitespace collapsed) and whose age does not conflict with the report's.

Ages conflict when both are known and more than ``AGE_TOLERANCE`` (2) years apart. A
missing age on either side conflicts with nothing (an age is often unknown); a person
without an age takes the first age a matching report gives, and keeps it. When no person
matches, or several do (the report could be about any of them), a new person is created:
code never picks one of several. The new person then shows the others as possible
duplicates (reason ``same_name``) until a person decides.

Everything short of a confident match is a *possible duplicate* with reasons
(:func:`possible_duplicates`), computed when asked, never stored:

- ``same_name``: the same normalised name (ages conflict, or several people have it);
- ``invisible_characters``: the names differ only by invisible format characters
  (zero-width space, zero-width joiners, soft hyphen, byte order mark: Unicode category Cf);
- ``confusable_characters``: the names have the same length and differ only in a few
  letters (fewer than the letters they share) of another script that read the same in
  Latin letters (Cyrillic "а" for Latin "a"), or only in compatibility forms (full-width
  "Ｍ"). The small approach of ADR 0062: NFKC and
  an ``anyascii`` skeleton per character, with the script taken from the character's
  Unicode name (no confusables table is installed);
- ``transliteration``: the names read the same once transliterated to Latin letters
  (:func:`trace_app.domain.search.search_key`: सुनिता राई and Sunita Rai), ages compatible;
- ``close_spelling``: the transliterated names are at least ``CLOSE_SPELLING_SCORE``
  similar (``rapidfuzz`` ratio, 0-100), ages compatible.

The first three are offered whatever the ages (they look like the same name to a
reader); the reason's words then say that the ages differ. A pair whose current decision
(see :mod:`trace_app.domain.links`) is "same" or "different" is not offered.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from anyascii import anyascii
from rapidfuzz import fuzz
from sqlalchemy import Connection, Select, select
from sqlalchemy.orm import Session, selectinload

from trace_app.domain.errors import InvalidReportError, NotFoundError
from trace_app.domain.links import decided_other_ids, same_person_ids
from trace_app.domain.search import people_search_key, search_key
from trace_app.domain.text import clean_name, name_key
from trace_app.store import name_index, word_index
from trace_app.store.models import Person, PersonAlternateName
from trace_app.store.sql import in_values
from trace_app.store.types import new_id
from trace_app.store.word_index import one_change_variants, one_edit_variants

AGE_TOLERANCE = 2
CLOSE_SPELLING_SCORE = 88.0
MAX_ALTERNATE_NAMES = 10
# Bounds of the candidates read through the word index for one person (see _blocked):
# the people whose words may make the same key or a close spelling of one of its names,
# same keys first (up to this many); a one-word name's neighbours by its nearest words
# (up to NEIGHBOUR_LIMIT). Both keep a person page's cost bounded however large the
# incident.
SAME_KEY_LIMIT = 1000
NEIGHBOUR_LIMIT = 200
# How many of the incident's words nearest to a word of a name by trigrams stand for it
# where two changes to it are allowed (trace_app.store.word_index.near_words)
NEAR_WORD_LIMIT = 50


class Reason:
    """The machine-readable codes of :class:`DuplicateReason`."""

    SAME_NAME = "same_name"
    INVISIBLE = "invisible_characters"
    CONFUSABLE = "confusable_characters"
    TRANSLITERATION = "transliteration"
    CLOSE_SPELLING = "close_spelling"


@dataclass(frozen=True, slots=True)
class DuplicateReason:
    code: str
    words: str


@dataclass(frozen=True, slots=True)
class PossibleDuplicate:
    person_id: str
    name: str
    reasons: tuple[DuplicateReason, ...]


def ages_conflict(a: int | None, b: int | None) -> bool:
    """Both ages known and more than ``AGE_TOLERANCE`` years apart."""
    return a is not None and b is not None and abs(a - b) > AGE_TOLERANCE


def clean_alternate_names(names: Iterable[str], primary: str = "") -> list[str]:
    """Cleaned alternate names: blank ones and repeats (by :func:`name_key`, the primary
    name among them) dropped, first spelling kept."""
    seen = {name_key(primary)} if primary.strip() else set()
    kept: list[str] = []
    for raw in names:
        display = clean_name(raw)
        key = name_key(display)
        if key and key not in seen:
            seen.add(key)
            kept.append(display)
    return kept


class NameIndex:
    """The incident's people by the normalised form of their names and alternate names,
    for a known set of keys: read in two statements (each served by an (incident,
    name_key) index), then kept up to date by :func:`match_or_create_person` as it
    creates people and gives them names, so a batch of matches reads the database once.
    """

    def __init__(self, session: Session, incident_id: str, keys: Iterable[str]) -> None:
        self.incident_id = incident_id
        self.keys = set(keys)
        self._people: dict[str, dict[str, Person]] = {key: {} for key in self.keys}
        wanted = sorted(self.keys)
        if not wanted:
            return
        for person in session.scalars(
            select(Person).where(
                Person.incident_id == incident_id, in_values(Person.name_key, wanted)
            )
        ):
            self._people[person.name_key][person.id] = person
        alternates = session.execute(
            select(PersonAlternateName.name_key, PersonAlternateName.person_id).where(
                PersonAlternateName.incident_id == incident_id,
                in_values(PersonAlternateName.name_key, wanted),
            )
        ).all()
        for key, pid in alternates:
            known = session.get(Person, pid) if pid not in self._people[key] else None
            if known is not None:
                self._people[key][pid] = known

    def people(self, key: str) -> list[Person]:
        """The people with this name key, in id order (``key`` must be one of ``keys``)."""
        found = self._people[key]
        return [found[pid] for pid in sorted(found)]

    def add(self, person: Person) -> None:
        """Index ``person`` under its name and alternate names (those among ``keys``)."""
        for key in (person.name_key, *(a.name_key for a in person.alternate_names)):
            if key in self.keys:
                self._people[key][person.id] = person


def add_alternate_names(person: Person, names: Iterable[str]) -> None:
    """Give ``person`` the names it does not have yet (by :func:`name_key`) as alternate
    names, and refresh its search key."""
    have = {name_key(person.name), *(a.name_key for a in person.alternate_names)}
    position = max((a.position for a in person.alternate_names), default=0)
    added = False
    for raw in names:
        display = clean_name(raw)
        key = name_key(display)
        if not key or key in have:
            continue
        have.add(key)
        position += 1
        added = True
        person.alternate_names.append(
            PersonAlternateName(
                id=new_id("pan"),
                incident_id=person.incident_id,
                name=display,
                name_key=key,
                position=position,
            )
        )
    if added:
        person.search_key = people_search_key(
            [person.name, *(a.name for a in person.alternate_names)]
        )


def match_or_create_person(
    session: Session,
    incident_id: str,
    name: str,
    age: int | None,
    alternate_names: Sequence[str] = (),
    person_id: str | None = None,
    index: NameIndex | None = None,
) -> Person:
    """The person a report about ``name`` (aged ``age``) is about, by the rule in the
    module docstring; a new person (added to the session) when there is no confident
    match. ``alternate_names`` are added to the person (new or found); with an explicit
    ``person_id`` the report's own name is added too when the person does not have it.

    ``index``, a :class:`NameIndex` of this incident holding the name's key, spares the
    lookup (a batch builds one for all its names); without it the people with the name
    are read here.

    Raises :class:`InvalidReportError` for a blank name or a person of another incident
    and :class:`NotFoundError` for an unknown ``person_id``, before anything is added to
    the session. The caller flushes and commits.
    """
    display = clean_name(name)
    if not display:
        raise InvalidReportError(
            "Enter the name of the person the report is about.", fields=("person.name",)
        )
    alternates = clean_alternate_names(alternate_names, display)
    if person_id is not None:
        person = session.get(Person, person_id)
        if person is None:
            raise NotFoundError(f"No person with id {person_id!r}.")
        if person.incident_id != incident_id:
            raise InvalidReportError(
                "The chosen person belongs to another incident.", fields=("person.person_id",)
            )
        _attach(person, age, [display, *alternates])
        if index is not None:
            index.add(person)
        return person
    key = name_key(display)
    if index is None or index.incident_id != incident_id or key not in index.keys:
        index = NameIndex(session, incident_id, [key])
    compatible = [p for p in index.people(key) if not ages_conflict(p.age, age)]
    if len(compatible) == 1:
        _attach(compatible[0], age, alternates)
        index.add(compatible[0])
        return compatible[0]
    person = Person(
        id=new_id("per"),
        incident_id=incident_id,
        name=display,
        name_key=key,
        search_key=people_search_key([display]),
        age=age,
    )
    session.add(person)
    add_alternate_names(person, alternates)
    index.add(person)
    return person


def _attach(person: Person, age: int | None, names: list[str]) -> None:
    if person.age is None and age is not None:
        person.age = age
    add_alternate_names(person, names)


# ---- look-alikes -------------------------------------------------------------------


def _visible(text: str) -> str:
    """``text`` without invisible format characters (Unicode category Cf, of which ASCII
    has none)."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _script(ch: str) -> str:
    """The script of a letter as its Unicode name starts ("LATIN", "CYRILLIC", ...)."""
    return unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]


def _confusable_pairs(a: str, b: str) -> list[tuple[str, str]] | None:
    """The differing characters of two visible, case-folded names when they differ only
    in look-alikes (see the module docstring); ``None`` otherwise."""
    if a == b:
        return None
    fa, fb = unicodedata.normalize("NFKC", a), unicodedata.normalize("NFKC", b)
    if fa == fb:
        return [(x, y) for x, y in zip(a, b, strict=False) if x != y] or [(a, b)]
    if len(fa) != len(fb):
        return None
    pairs: list[tuple[str, str]] = []
    for x, y in zip(fa, fb, strict=True):
        if x == y:
            continue
        if _script(x) == _script(y) or anyascii(x).casefold() != anyascii(y).casefold():
            return None
        if not anyascii(x):
            return None
        pairs.append((x, y))
    # a few swapped characters in an otherwise identical name, not another script
    same = sum(1 for x, y in zip(fa, fb, strict=True) if x == y and not x.isspace())
    return pairs if len(pairs) < same else None


def _describe(ch: str) -> str:
    return f"'{ch}' (U+{ord(ch):04X}, {unicodedata.name(ch, 'unnamed').title()})"


def _age_words(a: int | None, b: int | None) -> str:
    if ages_conflict(a, b):
        return f"; the ages ({a} and {b}) are more than {AGE_TOLERANCE} years apart"
    return ""


@functools.lru_cache(maxsize=8192)
def _readings(name: str) -> tuple[str, str, str]:
    """A name's normalised form (``name_key``), the same without invisible characters,
    and that one's search key. Cached: a person page compares each of its names with
    hundreds of others, and an import compares the same names again."""
    key = name_key(name)
    visible = _visible(key)
    return key, visible, search_key(visible)


def reading_key(name: str) -> str:
    """The search key the reason rules compare for ``name``: that of its normalised form
    without invisible characters (for a name in ASCII, ``search_key(name)`` itself)."""
    return _readings(name)[2]


def name_reasons(a: str, b: str, age_a: int | None, age_b: int | None) -> list[DuplicateReason]:
    """Why a person named ``a`` may be the person named ``b`` (empty: no reason)."""
    (ka, va, sa), (kb, vb, sb) = _readings(a), _readings(b)
    ages = _age_words(age_a, age_b)
    if ka == kb:
        return [DuplicateReason(Reason.SAME_NAME, f"The same name, {b}{ages}.")]
    if va == vb and va:
        hidden = sorted({ch for ch in ka + kb if unicodedata.category(ch) == "Cf"})
        words = ", ".join(f"U+{ord(ch):04X}" for ch in hidden)
        return [
            DuplicateReason(
                Reason.INVISIBLE, f"{b} differs only by invisible characters ({words}){ages}."
            )
        ]
    pairs = _confusable_pairs(va, vb)
    if pairs:
        shown = "; ".join(f"{_describe(y)} where {a} has {_describe(x)}" for x, y in pairs[:3])
        return [
            DuplicateReason(
                Reason.CONFUSABLE, f"{b} looks the same but has other characters: {shown}{ages}."
            )
        ]
    if ages:
        return []
    if not sa or not sb:
        return []
    if sa == sb:
        return [
            DuplicateReason(
                Reason.TRANSLITERATION,
                f"{a} and {b} read the same once accents and scripts are set aside ({sa}).",
            )
        ]
    score = fuzz.ratio(sa, sb)
    if score >= CLOSE_SPELLING_SCORE:
        return [
            DuplicateReason(
                Reason.CLOSE_SPELLING,
                f"{b} is a close spelling of {a} (similarity {score:.0f} of 100).",
            )
        ]
    return []


def _alternates(session: Session, person_ids: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    if not person_ids:
        return found
    for pid, alt in session.connection().execute(
        select(PersonAlternateName.person_id, PersonAlternateName.name)
        .where(in_values(PersonAlternateName.person_id, person_ids))
        .order_by(PersonAlternateName.position)
    ):
        found.setdefault(pid, []).append(alt)
    return found


def _blocked(session: Session, person: Person) -> set[str]:
    """The ids of the people of ``person``'s incident worth comparing with it name by
    name, read through the word index (:mod:`trace_app.store.word_index`), for each line
    of its search key (the key of one of its names):

    - the people whose words may make a close spelling of the line within
      ``_most_changes`` of it: for each word of the line, the word itself or one that
      may stand for it (:func:`_close_word_groups`: a letter left out or added, a piece
      of it, joined with a neighbour, the space moved), each costing what it takes, a
      word missing costing more, the cost of all within the changes allowed; those holding the most
      first, at most ``SAME_KEY_LIMIT``. Every same-name, invisible-character,
      look-alike and transliteration pair has the same key, so holds every word.
    - for a one-word line, the holders of the word (at most ``SAME_KEY_LIMIT``), then of
      the words one edit away and of the ``NEAR_WORD_LIMIT`` words nearest to it by
      trigrams, at most ``NEIGHBOUR_LIMIT`` (:func:`_one_word_neighbours`). A line of one
      word written twice or more ("li li", "susu susu") is read as several words: its
      close spellings may join them ("lili"), and a word missing costs a close spelling
      at least three half-changes for each time it is written, so the bound above holds.

    A line shorter than a trigram finds the names that start with it (its close
    spellings are the same key: ``CLOSE_SPELLING_SCORE`` allows no edit under four
    letters); an empty key (no Latin reading) finds the others without one.

    Bounded first (issue 43, ADR 0110): the people whose whole key is the line, from
    the key's B-tree, and for a line of several words those holding every word and the
    names nearest to it in key order (:func:`_nearest_to_line`). When these reach
    ``SAME_KEY_LIMIT`` they are the line's candidates and the words' holders (every
    holder of "maya" and of "gurung" for a common name) are not all read; below it,
    the steps above run as they always did."""
    connection = session.connection()
    dialect = connection.dialect.name
    incident_id = person.incident_id
    base = select(Person.id, Person.name, Person.search_key).where(
        Person.incident_id == incident_id
    )
    mine = person.search_key or search_key(person.name)
    found: set[str] = set()
    for line in dict.fromkeys(mine.split("\n")):
        if not line or len(line) < name_index.TRIGRAM:
            query = (
                name_index.without_key(base, dialect)
                if not line
                else name_index.starting_with(base, dialect, line)
            )
            found.update(row[0] for row in connection.execute(query.limit(SAME_KEY_LIMIT)))
            continue
        # the same key first: a common name's namesakes fill the bound from one range of
        # the key's B-tree, and the words' holders (every holder of "maya" and of
        # "gurung", a tenth of the incident or more) are not read
        others = base.where(Person.id != person.id)
        same = connection.execute(
            name_index.with_key(others, dialect, line).limit(SAME_KEY_LIMIT)
        ).all()
        found.update(row[0] for row in same)
        if len(same) >= SAME_KEY_LIMIT:
            continue
        words = line.split()
        distinct = list(dict.fromkeys(words))
        if len(words) == 1:
            held = word_index.holding(base, incident_id, words, SAME_KEY_LIMIT)
            found.update(row[0] for row in connection.execute(held))
            found.update(_one_word_neighbours(connection, base, incident_id, words[0]))
            continue
        if len(distinct) > 1:
            nearest = _nearest_to_line(connection, others, incident_id, line, distinct)
            namesakes = {row[0] for row in same} | {person.id}
            fresh = [pid for pid in nearest if pid not in namesakes]
            if len(same) + len(fresh) >= SAME_KEY_LIMIT:
                found.update(fresh[: SAME_KEY_LIMIT - len(same)])
                continue
        # several words, one of them maybe repeated ("li li"): by the words as written
        # (their joins, "lili") and what each distinct word costs
        changes = _most_changes(len(line))
        groups = _close_word_groups(connection, incident_id, words, changes)
        # a word not held costs 3 half-changes (see _close_word_groups), within 2 * changes
        at_least = _MISSING * len(distinct) - 2 * changes
        found.update(
            word_index.people_holding_groups(
                connection, incident_id, groups, at_least, SAME_KEY_LIMIT
            )
        )
    return found


# How many holders of each word are counted to find the rarest one (_nearest_to_line)
WORD_COUNT_PROBE = 2000


def _nearest_to_line(
    connection: Connection,
    others: Select[str, str, str],
    incident_id: str,
    line: str,
    distinct: Sequence[str],
) -> list[str]:
    """The people the word aggregation would rank first for ``line`` (several words),
    read in bounded steps, for when they alone fill ``SAME_KEY_LIMIT``: those holding
    every word of it (the highest score; ``word_index.holding_all``, from the rarest
    word's holders), then those whose key begins with its first three quarters, nearest
    to it in key order ("maya gurung 4", "maya gurung 43" for "maya gurung 42";
    ``name_index.around_in_key_order``). Every holder of "maya" and of "gurung" is not
    read to keep the 1,000 best of them."""
    dialect = connection.dialect.name
    ids = word_index.holding_all(
        connection, incident_id, distinct, SAME_KEY_LIMIT, WORD_COUNT_PROBE
    )
    if len(line) >= name_index.PIECES_FROM:
        before, after = name_index.around_in_key_order(others, dialect, line)
        later = connection.execute(after.limit(SAME_KEY_LIMIT)).all()
        earlier = connection.execute(before.limit(SAME_KEY_LIMIT)).all()
        for pair in itertools.zip_longest(later, earlier):
            ids.extend(row[0] for row in pair if row is not None)
    return list(dict.fromkeys(ids))


def _most_changes(length: int) -> int:
    """The most single-character changes (a character left out or added; a replaced one
    is two) between a key of ``length`` characters and a close spelling of it: the
    ``rapidfuzz`` ratio is 100 * (1 - changes / (length + other length)), and the other
    key is at most ``changes`` longer."""
    cut = (100.0 - CLOSE_SPELLING_SCORE) / 100.0
    return int(2 * cut * length / (1 - cut) + 1e-9)


def _one_word_neighbours(
    connection: Connection, base: Select[str, str, str], incident_id: str, word: str
) -> list[str]:
    """The holders of the incident's words one edit away from ``word`` or a piece of it
    (the name split in two, "li li" for "lili": a piece too short for a trigram is
    never near by trigrams), then of the ``NEAR_WORD_LIMIT`` words nearest to it by
    trigrams (two changes or more), in that order, at most ``NEIGHBOUR_LIMIT``."""
    strings = {*one_edit_variants(word), *_halves(word), *_pieces(word, _most_changes(len(word)))}
    away = word_index.existing_words(connection, incident_id, strings)
    near = [*sorted(away), *word_index.near_words(connection, incident_id, word, NEAR_WORD_LIMIT)]
    if not near:
        return []
    held = word_index.holding(base, incident_id, list(dict.fromkeys(near)), NEIGHBOUR_LIMIT)
    return [row[0] for row in connection.execute(held)]


def _pieces(word: str, changes: int) -> set[str]:
    """The pieces of ``word`` that a name splitting it with up to ``changes`` spaces
    holds whole: split into ``k + 1`` words, one of them has at least ``len / (k + 1)``
    letters, so every piece at least ``len / (changes + 1)`` long ("111" and "and" of
    "or111and" for "or 111 and", two spaces added)."""
    shortest = max(1, -(-len(word) // (changes + 1)))
    return {
        word[start:end]
        for start in range(len(word))
        for end in range(start + shortest, len(word) + 1)
        if end - start < len(word)
    }


def _halves(word: str) -> set[str]:
    """For each place ``word`` may be cut in two, the longer piece (or both): a person
    whose name splits the word holds both pieces, so one of them stands for it."""
    return {
        piece
        for cut in range(1, len(word))
        for piece in (word[:cut], word[cut:])
        if 2 * len(piece) >= len(word)
    }


# What a word of a name costs a close spelling, in half-changes (see _close_word_groups);
# a group is worth _MISSING less its cost
_KEPT, _JOINED, _CHANGED, _MISSING = 0, 1, 2, 3


def _close_word_groups(
    connection: Connection, incident_id: str, words: Sequence[str], changes: int
) -> list[dict[str, int]]:
    """For each distinct word of a name, the incident's words that may stand for it in a close
    spelling, with what holding them is worth (``_MISSING`` less the changes they cost,
    in half-changes): the word itself (0); a word joining it with its neighbours, as
    written (the space left out: one change for two words, 1 each); a word one change
    away (a letter left out or added), a piece of it (a space added), a join of two or
    three words one change away (the space typed as a letter, or left out with a
    letter) or a piece of two
    words joined (the space moved): 2 each. A word holding none of these took at least
    three half-changes: two of its own (a replaced letter, two swapped, two left out or
    added), or one of its own and one shared with its neighbour at a space. When every
    word of the name may have taken two changes, each word's ``NEAR_WORD_LIMIT``
    nearest words by trigrams are worth 2 too."""
    # the joins come from the name as written (a word may come twice: "susu susu rai"),
    # the groups are its distinct words
    distinct = list(dict.fromkeys(words))
    costs = {
        word: dict.fromkeys({*one_change_variants(word), *_halves(word)}, _CHANGED)
        for word in distinct
    }
    for a, b in itertools.pairwise(words):
        joined = a + b
        for word in (a, b):
            costs[word].update(dict.fromkeys(one_change_variants(joined), _CHANGED))
        costs[a].update(dict.fromkeys((joined[:cut] for cut in range(1, len(joined))), _CHANGED))
        costs[b].update(dict.fromkeys((joined[cut:] for cut in range(1, len(joined))), _CHANGED))
    # three words joined with a letter left out or added ("111nearnear" for "111 near
    # nearr": two spaces and a letter, three changes in a fourteen-letter name)
    for trio in zip(words, words[1:], words[2:], strict=False):
        for variant in one_change_variants("".join(trio)):
            for word in trio:
                costs[word].setdefault(variant, _CHANGED)
    for run in (2, 3):
        for at in range(len(words) - run + 1):
            joined = "".join(words[at : at + run])
            for word in words[at : at + run]:
                costs[word][joined] = _JOINED
    for word in distinct:
        costs[word][word] = _KEPT
    have = word_index.existing_words(connection, incident_id, set().union(*costs.values()))
    if 4 * len(distinct) <= 2 * changes:
        for word, cost in costs.items():
            if len(word) >= name_index.TRIGRAM:
                near = word_index.near_words(connection, incident_id, word, NEAR_WORD_LIMIT)
                have.update(near)
                for other in near:
                    cost.setdefault(other, _CHANGED)
    return [
        {w: _MISSING - c for w, c in cost.items() if w in have or c == _KEPT}
        for cost in costs.values()
    ]


def duplicate_candidates(
    session: Session, person: Person, excluded: Iterable[str] = ()
) -> list[PossibleDuplicate]:
    """The look-alikes of ``person`` in its incident (see the module docstring), leaving
    out ``excluded`` ids, in name order: the reason rules applied to the people that
    :func:`_blocked` reads through the index, never to the whole incident, and only to
    those :func:`may_be_alike` keeps."""
    near = _blocked(session, person) - {person.id, *excluded}
    if not near:
        return []
    others = (
        session.connection()
        .execute(
            select(Person.id, Person.name, Person.age, Person.search_key).where(
                in_values(Person.id, near)
            )
        )
        .all()
    )
    alternates = _alternates(session, [person.id, *(o[0] for o in others)])
    my_names = [person.name, *alternates.get(person.id, ())]
    my_keys = [reading_key(name) for name in my_names]
    found: list[PossibleDuplicate] = []
    for pid, name, age, stored_key in others:
        their_names = (name, *alternates.get(pid, ()))
        if not may_be_alike(my_keys, their_names, stored_key):
            continue
        reasons: dict[str, DuplicateReason] = {}
        for mine_name in my_names:
            for theirs in their_names:
                for reason in name_reasons(mine_name, theirs, person.age, age):
                    reasons.setdefault(reason.code, reason)
        if reasons:
            found.append(PossibleDuplicate(pid, name, tuple(reasons.values())))
    return sorted(found, key=lambda d: (name_key(d.name), d.person_id))


def may_be_alike(my_keys: Sequence[str], their_names: Sequence[str], stored_key: str) -> bool:
    """False only where :func:`name_reasons` finds no reason for any pair of names, read
    from the stored search key rather than from each name's readings (a million-people
    incident offers a person page 1,000 candidates, nearly all without a reason).

    Every reason needs two names whose readings' search keys are equal (same name,
    invisible or look-alike characters, transliteration) or at least
    ``CLOSE_SPELLING_SCORE`` alike; an empty key (no Latin reading) can only meet
    another one. For a name written in ASCII, its reading's key is its stored line
    (``search_key`` of the name; tests/trace_app/test_name_index.py checks it), so an
    ASCII-only person none of whose lines is that close to one of ``my_keys`` has no
    reason. Anyone else goes to the rules. ``my_keys``: :func:`reading_key` of each of
    the other person's names; ``stored_key``: ``people.search_key`` of ``their_names``."""
    if not all(my_keys) or not all(name.isascii() for name in their_names):
        return True
    lines = stored_key.split("\n")
    return any(fuzz.ratio(mine, line) >= CLOSE_SPELLING_SCORE for mine in my_keys for line in lines)


def not_offered_ids(session: Session, person_id: str) -> set[str]:
    """The people never offered as ``person_id``'s possible duplicates: every pair whose
    current decision is "same" or "different", and the people decided "same" through
    others (A same as B, B same as C: C is not offered to A)."""
    return decided_other_ids(session, person_id) | set(same_person_ids(session, person_id))


def possible_duplicates(session: Session, person: Person) -> list[PossibleDuplicate]:
    """The people of ``person``'s incident that may be the same person, with reasons,
    leaving out those :func:`not_offered_ids` names."""
    return duplicate_candidates(session, person, not_offered_ids(session, person.id))


def get_person(session: Session, person_id: str) -> Person:
    """A person with its alternate names; :class:`NotFoundError` for an unknown id."""
    person = session.scalars(
        select(Person).where(Person.id == person_id).options(selectinload(Person.alternate_names))
    ).first()
    if person is None:
        raise NotFoundError(f"No person with id {person_id!r}.")
    return person
