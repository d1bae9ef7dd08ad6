"""First-hand accounts by grammar, and reproduced accounts as relays: must and must-not
examples of every kind, in our own words, and the grammar table's format."""

from __future__ import annotations

import pytest

from trace_app.investigation.attribution_cues import (
    CueKind,
    LexiconError,
    caution_cues,
    find_cues,
    first_hand_cues,
    parse_lexicon,
    shipped_lexicons,
)
from trace_app.investigation.writer_grammar import borrowed_spans, quoted_spans


def first_hand_words(text: str) -> list[str]:
    return [c.words for c in first_hand_cues(find_cues(text))]


def relay_words(text: str) -> list[str]:
    return [c.words for c in find_cues(text) if c.kind is CueKind.RELAY]


# The writer as the subject (or addressee) of a finite clause about what happened, with
# ordinary verbs no list names: each must give a first-hand cue, with these words.
FIRST_HAND_MUST = [
    # a past form, regular and irregular
    ("We waited three hours at the landslide before the lane opened.", "We waited"),
    ("I went down to the river gauge at six with the night guard.", "I went"),
    ("This morning we drove the last two families up to the school.", "we drove"),
    ("At 09:40 I logged Mina Test, 31, at the gate.", "I logged"),
    # a perfect, a progressive, a passive
    ("We have received nine patients from the bus since midnight.", "We have received"),
    ("We are still trying to arrange a jeep for him.", "We are still trying"),
    ("I was called to the east ward twice during the night.", "I was called"),
    ("We were evacuated from the hostel at 02:00.", "We were evacuated"),
    # a place or state at the scene
    ("We are at the temple hall with about ninety people.", "We are at"),
    ("I'm safe, the water stopped at the second step.", "I'm safe"),
    # a perception
    ("I can see smoke over the ridge from the clinic roof.", "I can see"),
    ("I watched the helicopter land at noon.", "I watched"),
    # the writer's group, by "our"
    ("Our crew got everyone down the back stairs.", "Our crew got"),
    ("Our night nurse admitted him at four.", "Our night nurse admitted"),
    (
        "Our teams on the ground have distributed 500 kits.",
        "Our teams on the ground have distributed",
    ),
    # the writer as addressee of a past verb
    ("A shopkeeper waved us down at the footbridge.", "waved us"),
    ("The caretaker called us about smoke on the third floor.", "called us"),
    # an experience, and a log line whose subject is left out
    ("We had a strong jolt here just after lunch.", "We had"),
    ("Please send a boat to the mill road. Was stranded there for six hours.", "Was stranded"),
    # "did" for emphasis, and two writers joined
    ("I did take these photos from our balcony.", "I did take"),
    ("My colleague and I walked her to the tent.", "I walked"),
    # a tweet that leaves out "I" before a sense verb and its object
    ("Just felt a strong jolt here, the shelves fell.", "Just felt"),
    ("#quake_test Heard a loud bang near the plant.", "Heard"),
    # a log entry after its heading, and a past obligation that was carried out
    ("Rescue log, day 5: pulled two survivors from the rubble at 11:40.", "pulled"),
    ("The water rose so fast that we had to climb onto the roof.", "we had"),
    # tweets: a demonstrative after a sense verb, a passive with "got" and no subject,
    # and "here" as the writer's own place
    ("Whoa, I felt that one!", "I felt"),
    ("Got evacuated from the campsite at 3am, all fine.", "Got evacuated"),
    ("The creek is a river now over here #flood_test", "over here"),
    ("Lights out and no water here in the lower town since noon.", "here in"),
]

# No first-hand cue: hopes, prayers, opinions, plans, negations, questions, stances,
# someone else's first person (retweets, quoted witnesses, reproduced accounts), plain
# news, and "our"/"us" that are not the writer acting or addressed.
FIRST_HAND_MUST_NOT = [
    "I hope everyone in the upper ward is safe.",
    "We pray for all the families who lost their homes.",
    "I think the relief is far too slow in the east.",
    "I believe many people are still missing there.",
    "We will send blankets as soon as the road opens.",
    "I'd like to thank every volunteer.",
    "We did not see her at the camp.",
    "We have no news of the second bus.",
    "Did you feel the shaking?",
    "Are we safe here tonight?",
    "I am so sad for everyone on the coast.",
    "We are with you, stay strong.",
    "Our thoughts are with the families of the miners.",
    "Our city was hit hard by the storm.",
    "Our relatives in the valley lost their house.",
    "This is the worst flood I have ever seen.",
    "We need more helicopters in the eastern villages.",
    "I feel so sorry for the people there.",
    "I saw on the news that the bridge is gone.",
    "RT @valley_resident_test: we lost our roof and we are sleeping at the school",
    'stay safe everyone "@harbour_test: We just watched the wave come over the wall"',
    'A shopkeeper said: "We heard a roar and then the houses were gone."',
    "Below is her account of the night: we climbed onto the roof and waited.",
    "A neighbour phoned one of our volunteers about the goats.",
    "Hundreds are unaccounted for across the US after the floods.",
    "Two corpses were found on Monday near the factory.",
    "Pray for the families in the flooded towns.",
    "Let us all help the people of the valley.",
    "I just donated ten dollars to the relief fund.",
    "Felt across the region, the quake damaged three bridges.",
    "See the latest photos of the flood on our site.",
    "We live far from the coast and we felt nothing.",
    "We have launched an appeal to raise funds for the families.",
    "We have to find a way to help them.",
    "Flood update from #county_test: the missing man was found alive by @sheriff_test.",
    # "that" opening a clause is hearsay; "here" as a pointer, a wish or a sympathy
    "I heard that Ravi Test was found near the mill.",
    "Here in the valley, the council says forty homes are lost.",
    "Click here for the shelter list.",
    "Wish I could be over here with my family tonight.",
    "Our thoughts are with everyone over here.",
    "Praying for all the people here in the hills.",
    "Got milk and blankets for the shelter? Drop them at the hall.",
]


@pytest.mark.parametrize(("text", "words"), FIRST_HAND_MUST)
def test_the_writers_own_clauses_are_first_hand(text: str, words: str) -> None:
    assert words in first_hand_words(text), find_cues(text)


@pytest.mark.parametrize("text", FIRST_HAND_MUST_NOT)
def test_hopes_opinions_and_other_peoples_first_person_are_not(text: str) -> None:
    assert first_hand_words(text) == [], find_cues(text)


# Reproduced accounts: someone else's first person, introduced as theirs, is relay.
REPRODUCED_MUST = [
    ("Below is her account of the second night: we climbed onto the roof.", "Below is her"),
    ("In his own words: the ground shook and we ran out with nothing.", "his own words"),
    ("Here is what the porter told our reporter about the trail.", "Here is what"),
    ("Maya Test's description of the camp is worth reading in full.", "Test's description"),
    (
        'A fisherman wrote to our page: "We pulled him out near the pier."',
        '"We pulled him out near',
    ),
    ('"We admitted him at four and he is talking," a ward nurse says.', '"We admitted him at four'),
    ("The caretaker recalled how the stairs filled with smoke.", "recalled"),
    ("The following is an account by a rescue worker: we reached the site at four.", "account by"),
    (
        "so scary \u201c@harbour_test: we watched the second wave\u201d",
        "\u201c@harbour_test: we watched the",
    ),
]


@pytest.mark.parametrize(("text", "words"), REPRODUCED_MUST)
def test_reproduced_accounts_are_relay_evidence(text: str, words: str) -> None:
    assert any(words in found for found in relay_words(text)), find_cues(text)


REPRODUCED_MUST_NOT = [
    # the writer quoting their own words, and quotes without a first person
    'I told her: "we will come back with blankets at seven."',
    'The sign on the gate reads "Closed until further notice".',
    "Our account of the night is in the log book at the desk.",
]


@pytest.mark.parametrize("text", REPRODUCED_MUST_NOT)
def test_the_writers_own_quotes_and_plain_quotes_are_not_relays(text: str) -> None:
    assert relay_words(text) == [], find_cues(text)


@pytest.mark.parametrize(
    ("text", "words", "kind"),
    [
        ("A man called us to say his neighbours are missing.", "called us to say", CueKind.RELAY),
        (
            "We received a list of 40 names from the school.",
            "received a list of 40 names from",
            CueKind.RELAY,
        ),
        ("Our update is based on figures from the ministry.", "based on", CueKind.RELAY),
        ("I just saw the video of the blast from the harbour.", "saw the video", CueKind.RELAY),
        (
            "We were watching the live coverage all night.",
            "watching the live coverage",
            CueKind.RELAY,
        ),
        ("Just found out my aunt is trapped on her roof.", "found out", CueKind.HEARSAY),
    ],
)
def test_passed_on_calls_lists_media_and_finding_out_are_caution(
    text: str, words: str, kind: CueKind
) -> None:
    assert words in [c.words for c in find_cues(text) if c.kind is kind]


def test_a_retweet_is_read_as_two_parts() -> None:
    text = "We lost power too. RT @town_test: we are sleeping at the school"
    cues = find_cues(text)
    assert [c.words for c in first_hand_cues(cues)] == ["We lost"]  # the writer's own
    assert [c.words for c in caution_cues(cues)] == ["RT @town_test"]  # a relay: it stops


def test_borrowed_parts_cover_quotes_and_everything_after_a_retweet_marker() -> None:
    text = 'She said "we are fine" and left. RT @x: more'
    assert quoted_spans(text) == [(9, 22)]
    assert borrowed_spans(text) == [(9, 22), (33, len(text))]
    assert quoted_spans('an "unclosed quote\nnext line') == [(3, 18)]


def test_first_hand_phrases_inside_a_quote_do_not_count() -> None:
    assert first_hand_words('The caller said "I saw it in person".') == []
    assert "in person" in first_hand_words("She gave me her name and age in person.")


def test_every_shipped_english_class_is_read() -> None:
    [english] = [lex for lex in shipped_lexicons() if lex.language == "en"]
    assert english.grammar is not None and "we" in english.grammar.subjects


def test_a_grammar_table_without_a_class_is_refused() -> None:
    text = (
        'language = "xx"\n[[cue]]\nkind = "hearsay"\npattern = "x"\n[grammar]\nsubjects = ["i"]\n'
    )
    with pytest.raises(LexiconError, match=r"xx.toml: grammar\.\w+ must be a list"):
        parse_lexicon(text, where="xx.toml")
