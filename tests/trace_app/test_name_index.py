"""Search and duplicate finding through the trigram index give what a full scan of the
incident gives, on SQLite and PostgreSQL: generated names in Latin, Devanagari and
Cyrillic letters, with alternate names, look-alike letters, invisible characters and
typos (Hypothesis). The full scan is the ranking (``rank``) and the reason rules
(``name_reasons``) applied to every person of the incident."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA, Indel
from sqlalchemy import select
from sqlalchemy.orm import Session

from trace_app.domain.identity import (
    PossibleDuplicate,
    add_alternate_names,
    duplicate_candidates,
    match_or_create_person,
    may_be_alike,
    name_reasons,
    reading_key,
)
from trace_app.domain.search import (
    one_typo_away,
    people_search_key,
    rank,
    search_key,
    search_people,
)
from trace_app.store import name_index, word_index
from trace_app.store.db import Database
from trace_app.store.models import Incident, Person
from trace_app.store.types import new_id

# the same syllables in three scripts: one name written in two of them reads the same
SYLLABLES = {
    "latin": ["su", "ni", "ta", "ra", "ma", "ya", "gu", "ru", "an", "il", "bi", "no", "da"],
    "devanagari": ["सु", "नि", "ता", "रा", "मा", "या", "गु", "रु", "अन", "इल", "बि", "नो", "दा"],
    "cyrillic": ["су", "ни", "та", "ра", "ма", "я", "гу", "ру", "ан", "ил", "би", "но", "да"],
}
# what a person may slip into a name: a Cyrillic look-alike, invisible characters
SLIPS = {"a": "\u0430", "o": "\u043e"}
INVISIBLE = ["\u200b", "\u200d", "\u00ad"]
LETTERS = "abcdeghiklmnoprstuy"
# A query of this many letters or more finds every typo of it; a shorter one may miss some,
# too few trigrams survive a typo in a short word ("ussu" and "susu" share none; the
# search section of docs/trace.md says so)
TYPO_FOUND_FROM = 6

SETTINGS = settings(
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


Spelling = list[list[int]]  # words, each a list of syllable numbers


def written(spelling: Spelling, script: str) -> str:
    text = " ".join("".join(SYLLABLES[script][i] for i in word) for word in spelling)
    return text.title() if script != "devanagari" else text


spellings = st.lists(
    st.lists(st.integers(0, len(SYLLABLES["latin"]) - 1), min_size=2, max_size=4),
    min_size=1,
    max_size=3,
)


@st.composite
def typo(draw: st.DrawFn, text: str) -> str:
    """``text`` with one letter left out, doubled, replaced or swapped with the next."""
    if len(text) < 2:
        return text
    at = draw(st.integers(0, len(text) - 2))
    kind = draw(st.sampled_from(["drop", "double", "replace", "swap"]))
    if kind == "drop":
        return text[:at] + text[at + 1 :]
    if kind == "double":
        return text[: at + 1] + text[at:]
    if kind == "replace":
        return text[:at] + draw(st.sampled_from(LETTERS)) + text[at + 1 :]
    return text[:at] + text[at + 1] + text[at] + text[at + 2 :]


@st.composite
def names(draw: st.DrawFn, spelling: Spelling | None = None) -> str:
    """A name in one of the scripts, maybe with a typo, a look-alike letter or an
    invisible character."""
    name = written(spelling or draw(spellings), draw(st.sampled_from(sorted(SYLLABLES))))
    variant = draw(st.sampled_from(["plain", "typo", "slip", "invisible"]))
    if variant == "typo":
        name = draw(typo(name))
    elif variant == "slip":
        name = "".join(SLIPS.get(ch, ch) if draw(st.booleans()) else ch for ch in name)
    elif variant == "invisible":
        at = draw(st.integers(1, max(1, len(name) - 1)))
        name = name[:at] + draw(st.sampled_from(INVISIBLE)) + name[at:]
    return name if name.strip() else "Sunita"


@dataclass(frozen=True)
class Someone:
    name: str
    age: int | None
    alternates: tuple[str, ...]


someone = st.builds(
    Someone,
    names(),
    st.one_of(st.none(), st.integers(1, 90)),
    st.lists(names(), max_size=2).map(tuple),
)


@st.composite
def people_lists(draw: st.DrawFn) -> list[Someone]:
    """People, and people whose names are another writing of one of theirs (another
    script, a typo, a look-alike letter): the pairs duplicate finding is for."""
    spellings_drawn = draw(st.lists(spellings, min_size=1, max_size=5))
    people = [
        Someone(draw(names(spelling)), draw(st.one_of(st.none(), st.integers(1, 90))), ())
        for spelling in spellings_drawn
        for _ in range(draw(st.integers(1, 3)))
    ]
    return people + draw(st.lists(someone, max_size=4))


def make_incident(database: Database, people: list[Someone]) -> str:
    """The people stored the way publishing stores them (same names may become one
    person), committed."""
    with database.session() as s:
        incident = Incident(id=new_id("inc"), name=f"Names {new_id('x')}")
        s.add(incident)
        s.flush()
        for someone in people:
            match_or_create_person(s, incident.id, someone.name, someone.age, someone.alternates)
            s.flush()
        return incident.id


def all_rows(s: Session, incident_id: str) -> list[tuple[str, str, str]]:
    rows = s.execute(
        select(Person.id, Person.name, Person.search_key).where(Person.incident_id == incident_id)
    ).all()
    return [(r[0], r[1], r[2]) for r in rows]


def full_scan_duplicates(s: Session, person: Person) -> list[PossibleDuplicate]:
    """Every other person of the incident compared name by name."""
    found: list[tuple[str, PossibleDuplicate]] = []
    mine = [person.name, *(a.name for a in person.alternate_names)]
    for other in s.scalars(select(Person).where(Person.incident_id == person.incident_id)):
        if other.id == person.id:
            continue
        reasons: dict[str, object] = {}
        for a in mine:
            for b in (other.name, *(x.name for x in other.alternate_names)):
                for reason in name_reasons(a, b, person.age, other.age):
                    reasons.setdefault(reason.code, reason)
        if reasons:
            duplicate = PossibleDuplicate(other.id, other.name, tuple(reasons.values()))  # type: ignore[arg-type]
            found.append((other.name, duplicate))
    from trace_app.domain.text import name_key

    found.sort(key=lambda item: (name_key(item[0]), item[1].person_id))
    return [d for _, d in found]


@SETTINGS
@given(people=people_lists(), data=st.data())
def test_indexed_search_ranks_like_the_full_scan(
    database: Database, people: list[Someone], data: st.DataObject
) -> None:
    incident_id = make_incident(database, people)
    someone = data.draw(st.sampled_from(people))
    source = data.draw(st.sampled_from([someone.name, *someone.alternates]))
    queries = [
        st.just(source),
        st.just(search_key(source)),
        st.sampled_from(search_key(source).split() or [source]),
    ]
    if len(search_key(source)) >= TYPO_FOUND_FROM:
        queries.append(typo(search_key(source)))
    # a typo of one word (found through the incident's words, word_index)
    long_words = [w for w in search_key(source).split() if len(w) >= TYPO_FOUND_FROM]
    if long_words:
        queries.append(st.sampled_from(long_words).flatmap(typo))
    q = data.draw(st.one_of(queries))
    key = search_key(q)
    with database.sessions() as s:
        indexed = [(m.person_id, m.score) for m in search_people(s, incident_id, q=q)]
        rows = all_rows(s, incident_id)
        full = [(m.person_id, m.score) for m in rank(key, rows)]
    if len(key) < name_index.TRIGRAM:
        # a query of one or two letters finds exactly the names holding a word that
        # begins with it, in the full scan's order (not a "ra" inside "bikram")
        words = {pid: stored.split() for pid, _, stored in rows}
        assert indexed == [hit for hit in full if any(w.startswith(key) for w in words[hit[0]])]
    elif len(key) >= TYPO_FOUND_FROM:
        # every name holding the query or one typo away from it, in the full scan's order;
        # other names that score above the cut-off by chance may be missing (a long query
        # is looked for by pieces, a one-word query through the words near it, others by
        # the trigrams they share: name_index.neighbours, word_index.near_words)
        assert indexed == [hit for hit in full if hit in indexed]
        with database.sessions() as s:
            keys = {pid: stored for pid, _, stored in all_rows(s, incident_id)}
        near = [hit for hit in full if one_typo_away(key, keys[hit[0]])]
        assert [hit for hit in indexed if hit in near] == near
    else:
        # a short query finds every name holding it, and typos of it where a trigram
        # survives: the full scan's results, in its order, less some typos
        assert indexed == [hit for hit in full if hit in indexed]
        assert [hit for hit in full if hit[1] == 100.0] == [h for h in indexed if h[1] == 100.0]


@SETTINGS
@given(people=people_lists(), data=st.data())
def test_blocked_duplicates_match_the_full_scan(
    database: Database, people: list[Someone], data: st.DataObject
) -> None:
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        persons = list(s.scalars(select(Person).where(Person.incident_id == incident_id)))
        person = data.draw(st.sampled_from(sorted(persons, key=lambda p: p.id)))
        assert duplicate_candidates(s, person) == full_scan_duplicates(s, person)


# ASCII names close to one another: few letters, spaces, punctuation, control characters
ASCII_NAME = st.text(alphabet="anrs AN-.'\t\x1c", min_size=1, max_size=10)
# any name on the other side: Latin, Cyrillic look-alikes, Devanagari, invisible characters
ANY_NAME = st.text(alphabet="anrs AN\u0430\u0455\u0938\u0941\u200b\u00ad", max_size=10)
AGES = st.one_of(st.none(), st.integers(0, 6))


@settings(max_examples=3000, deadline=None, database=None)
@given(
    mine=st.one_of(ASCII_NAME, ANY_NAME),
    theirs=st.lists(ASCII_NAME, min_size=1, max_size=3),
    age_a=AGES,
    age_b=AGES,
)
def test_a_person_in_ascii_with_a_reason_is_never_left_out_by_its_stored_key(
    mine: str, theirs: list[str], age_a: int | None, age_b: int | None
) -> None:
    """``may_be_alike`` reads an ASCII person's stored key instead of each name's
    readings: the two agree, and whenever the reason rules find a reason it keeps them."""
    for name in theirs:
        assert reading_key(name) == search_key(name)
    reasons = [r for b in theirs for r in name_reasons(mine, b, age_a, age_b)]
    kept = may_be_alike([reading_key(mine)], theirs, people_search_key(theirs))
    assert kept or not reasons, (mine, theirs, reasons)


def test_may_be_alike_leaves_out_only_ascii_people_far_from_every_name() -> None:
    mine = [reading_key("Sunita Rai"), reading_key("Sunita Thapa")]
    assert not may_be_alike(mine, ["Gopal Gurung"], people_search_key(["Gopal Gurung"]))
    assert may_be_alike(mine, ["Sunitha Rai"], people_search_key(["Sunitha Rai"]))
    # an alternate name close to one of mine keeps the person
    both = ["Gopal Gurung", "Sunita Tapa"]
    assert may_be_alike(mine, both, people_search_key(both))
    # a name in another script goes to the rules, whatever its key
    assert may_be_alike(mine, ["Гопал"], people_search_key(["Гопал"]))
    # so does everyone when one of my names has no Latin reading
    assert may_be_alike([*mine, ""], ["Gopal Gurung"], people_search_key(["Gopal Gurung"]))


def test_every_reason_code_found_through_the_index(database: Database) -> None:
    """One pair per reason code, among other people: each is found with its reason."""
    people = [
        Someone("Sunita Rai", 30, ()),
        Someone("Sunita Rai", 70, ()),  # same_name (ages conflict: a second person)
        Someone("Suni\u200bta Rai", 31, ()),  # invisible_characters
        Someone("Sunit\u0430 Rai", 29, ()),  # confusable_characters
        Someone("सुनिता राई", 30, ()),  # transliteration
        Someone("Sunitta Rai", 30, ()),  # close_spelling
        *(Someone(f"Maya Gurung {i}", 40, ()) for i in range(30)),
    ]
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        target = s.scalars(
            select(Person).where(Person.incident_id == incident_id, Person.age == 30)
        ).first()
        assert target is not None and target.name == "Sunita Rai"
        codes = {
            code for d in duplicate_candidates(s, target) for code in (r.code for r in d.reasons)
        }
        assert duplicate_candidates(s, target) == full_scan_duplicates(s, target)
    assert codes == {
        "same_name",
        "invisible_characters",
        "confusable_characters",
        "transliteration",
        "close_spelling",
    }


@pytest.mark.parametrize(
    ("name", "spelling"),
    [
        # every word changed a little: two letters swapped in a short word, one doubled
        ("Maay Maru Yadamaya", "Maya Marru Yadamaya"),
        ("Suni Tara", "Sunitara"),  # the space left out
        ("Suni Tara", "Sunixtara"),  # the space typed as a letter
        ("Sunitara", "Suni Tara"),  # a space added
        ("Sunitar Ai", "Sunit Arai"),  # the space moved, no word kept
        ("Susu Susu Rai", "Susususu Rai"),  # a word twice, the space between left out
        ("Sunita Rai", "Sunita Raai"),  # one word changed, the other kept
    ],
)
def test_close_spellings_found_through_the_words(
    database: Database, name: str, spelling: str
) -> None:
    """Close spellings that keep no word of the name, or only one, among people sharing
    its words: found through the words one edit away or joined, as by the full scan."""
    people = [
        Someone(name, 30, ()),
        Someone(spelling, 30, ()),
        *(Someone(f"{word} Gurung", 40, ()) for word in name.split()),
        *(Someone(f"Maya {word}", 40, ()) for word in name.split()),
    ]
    incident_id = make_incident(database, people)
    with database.sessions() as s:
        target = s.scalars(
            select(Person).where(Person.incident_id == incident_id, Person.name == name)
        ).one()
        found = duplicate_candidates(s, target)
        assert found == full_scan_duplicates(s, target)
    assert [(d.name, [r.code for r in d.reasons]) for d in found if d.name == spelling] == [
        (spelling, ["close_spelling"])
    ]


def test_short_query_lists_names_with_a_word_that_starts_with_it(database: Database) -> None:
    incident_id = make_incident(
        database,
        [
            Someone("Ram Thapa", None, ()),
            Someone("Ra", None, ()),
            Someone("Sita Rai", None, ()),
            Someone("Bikram Lama", None, ()),
            Someone("Dil Kumari", None, ("Sita Rana",)),
        ],
    )
    with database.sessions() as s:
        # names that begin with it first, then names with a word that begins with it (an
        # alternate name's too), never a name holding it inside a word
        ra = ["Ra", "Ram Thapa", "Sita Rai", "Dil Kumari"]
        assert [m.name for m in search_people(s, incident_id, q="ra")] == ra
        assert [m.name for m in search_people(s, incident_id, q="R")] == ra


def test_renamed_person_found_by_its_new_name(database: Database) -> None:
    incident_id = make_incident(database, [Someone("Binod Magar", 12, ())])
    with database.session() as s:
        person = s.scalars(select(Person).where(Person.incident_id == incident_id)).one()
        add_alternate_names(person, ["Бинод Магар", "Binu"])
    with database.sessions() as s:
        assert [m.name for m in search_people(s, incident_id, q="binu")] == ["Binod Magar"]
        assert [m.name for m in search_people(s, incident_id, q="binod magar")] == ["Binod Magar"]


@pytest.mark.parametrize("limit", [3])
def test_candidates_are_bounded(
    database: Database, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    from trace_app.domain import search

    incident_id = make_incident(database, [Someone(f"Asha Lama {i}", None, ()) for i in range(8)])
    monkeypatch.setattr(search, "CANDIDATE_LIMIT", limit)
    with database.sessions() as s:
        found = [m.name for m in search_people(s, incident_id, q="asha lama")]
    assert found == ["Asha Lama 0", "Asha Lama 1", "Asha Lama 2"]


def test_typo_neighbours_are_the_names_one_typo_away_not_the_best_ranked(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many names hold every piece of a several-word query, in another order, and rank
    above the one name holding it with a typo by shared trigrams; with the bound below
    their number, the typo is still found: the neighbours are the names the pieces'
    patterns match, and the others are not read."""
    from trace_app.domain import search

    decoys = [Someone(f"Ita Sun Rai {i}", None, ()) for i in range(12)]
    typo_name = "Sunitq Rai Bahadur Gurung Tamang"
    incident_id = make_incident(database, [*decoys, Someone(typo_name, None, ())])
    monkeypatch.setattr(search, "CANDIDATE_LIMIT", 5)
    with database.sessions() as s:
        found = [m.name for m in search_people(s, incident_id, q="sunita rai")]
    assert found == [typo_name]


def test_names_without_a_latin_reading_are_compared_with_each_other(database: Database) -> None:
    incident_id = make_incident(
        database,
        [Someone("★ ★", 30, ()), Someone("★\u200b ★", 30, ()), Someone("Asha Lama", 30, ())],
    )
    with database.sessions() as s:
        people = list(s.scalars(select(Person).where(Person.incident_id == incident_id)))
        keyless = [p for p in people if not p.search_key]
        assert len(keyless) == 2, [(p.name, p.search_key) for p in people]
        found = duplicate_candidates(s, keyless[0])
        assert [[r.code for r in d.reasons] for d in found] == [["invisible_characters"]]
        assert found == full_scan_duplicates(s, keyless[0])


def test_typo_neighbours_only_while_the_query_as_typed_finds_few(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enough names holding the query as typed: the typo "Kumr Thapa" is not looked for
    (it would rank after all of them); with fewer, it is found."""
    from trace_app.domain import search

    people = [Someone(f"Ram Kumar {i}", None, ()) for i in range(4)]
    incident_id = make_incident(database, [*people, Someone("Kumr Thapa", None, ())])
    with database.sessions() as s:
        assert "Kumr Thapa" in [m.name for m in search_people(s, incident_id, q="kumar")]
        monkeypatch.setattr(search, "ENOUGH_AS_TYPED", 4)
        found = [m.name for m in search_people(s, incident_id, q="kumar")]
    assert found == [f"Ram Kumar {i}" for i in range(4)]


def test_one_word_typo_found_through_the_incident_words(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-word typo reaches its people through the incident's words near it, closest
    first; the trigram neighbours of whole keys are asked only when no word is near (and
    for queries of several words)."""
    incident_id = make_incident(
        database,
        [
            Someone("सुनिता राई", None, ()),
            Someone("Maya Gurung", 30, ()),
            Someone("Sunil Rai", 40, ()),
            Someone("Bishnu Gurung", 50, ("Bishnu Gurunga",)),
        ],
    )
    asked: list[str] = []
    whole_keys = name_index.neighbours

    def neighbours(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[2])
        return whole_keys(*args, **kwargs)

    monkeypatch.setattr(name_index, "neighbours", neighbours)
    with database.sessions() as s:
        assert [m.name for m in search_people(s, incident_id, q="Sunitta")] == ["सुनिता राई"]
        found = [m.name for m in search_people(s, incident_id, q="Gurrung")]
        assert sorted(found) == ["Bishnu Gurung", "Maya Gurung"]
        assert found == [m.name for m in rank("gurrung", all_rows(s, incident_id))]
        assert asked == []
        assert search_people(s, incident_id, q="qxzv") == []
        assert asked == ["qxzv"]
        found = [m.name for m in search_people(s, incident_id, q="maya gurrung")]
        assert found == ["Maya Gurung"]
        assert asked == ["qxzv", "maya gurrung"]


def test_typo_neighbours_read_the_closest_words_first(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the people holding near words are more than the candidates allowed, those of
    the closest words are kept."""
    from trace_app.domain import search

    far = [Someone(f"Sunitaxx Lama {i}", None, ()) for i in range(6)]
    incident_id = make_incident(database, [*far, Someone("Sunita Rai", None, ())])
    monkeypatch.setattr(search, "CANDIDATE_LIMIT", 2)
    with database.sessions() as s:
        near = word_index.near_words(s.connection(), incident_id, "sunitta", 10)
        assert near[0] == "sunita", near
        # in one statement the first word's people come first, whatever their ids
        base = select(Person.id, Person.name, Person.search_key).where(
            Person.incident_id == incident_id
        )
        for words, expected in (
            (["sunita", "sunitaxx"], ["sunita", "sunitaxx", "sunitaxx"]),
            (["sunitaxx", "sunita"], ["sunitaxx", "sunitaxx", "sunitaxx"]),
        ):
            rows = s.execute(word_index.holding(base, incident_id, words, 3)).all()
            assert [row[1].split()[0].casefold() for row in rows] == expected, rows
        found = [m.name for m in search_people(s, incident_id, q="sunitta")]
    assert found[:1] == ["Sunita Rai"], found


@given(
    word=st.text(alphabet=word_index.WORD_LETTERS, min_size=1, max_size=8),
    at=st.integers(0, 8),
    letter=st.sampled_from(word_index.WORD_LETTERS),
)
def test_variants_are_exactly_one_change_or_edit_away(word: str, at: int, letter: str) -> None:
    """Every variant is one change (a letter left out or added) or one edit (also replaced
    or two swapped) away, and every such string made from the word is among them."""
    changes = set(word_index.one_change_variants(word))
    edits = set(word_index.one_edit_variants(word))
    assert all(Indel.distance(word, v) == 1 for v in changes)
    assert all(OSA.distance(word, v) == 1 for v in edits)
    at = min(at, len(word))
    made = {word[:at] + letter + word[at:], word[:at] + word[at + 1 :]} - {word, ""}
    assert made <= changes <= edits
    if at + 1 < len(word) and word[at] != word[at + 1]:
        assert word[:at] + word[at + 1] + word[at] + word[at + 2 :] in edits
    if at < len(word) and word[at] != letter:
        assert word[:at] + letter + word[at + 1 :] in edits


def _like(pattern: str) -> re.Pattern[str]:
    """A LIKE pattern as a regular expression (search keys hold no regex characters)."""
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else c for c in pattern), re.S)


KEY_TEXT = st.text(alphabet=word_index.WORD_LETTERS[-8:] + " ", min_size=name_index.PIECES_FROM)


@given(
    key=KEY_TEXT.map(lambda text: " ".join(text.split())).filter(
        lambda key: len(key) >= name_index.PIECES_FROM
    ),
    data=st.data(),
)
def test_one_typo_patterns_match_every_line_one_typo_away(key: str, data: st.DataObject) -> None:
    """The pieces' patterns, as LIKE patterns (SQLite) and as one regular expression
    (PostgreSQL), match every key with a line holding the key or a typo of it (the
    promise of a long search), and each holds a run the index can look up."""
    patterns = name_index.one_typo_patterns(key)
    assert all(p.runs() and all(run in p.head + p.tail for run in p.runs()) for p in patterns)
    around = st.text(alphabet=word_index.WORD_LETTERS[-8:] + " ", max_size=4)
    written = data.draw(around) + data.draw(typo(key)) + data.draw(around)
    line = " ".join(written.split())
    stored = data.draw(st.sampled_from([line, f"other name\n{line}", f"{line}\nother"]))
    if one_typo_away(key, stored):
        likes = [like for p in patterns for like in p.likes()]
        assert any(_like(like).fullmatch(stored) for like in likes), (key, stored)
        regex = re.compile("(" + "|".join(p.regex() for p in patterns) + ")", re.S)
        assert regex.search(stored), (key, stored)
