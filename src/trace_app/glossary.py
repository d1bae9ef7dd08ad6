"""Trace's words for people: every internal code a page shows, as a short phrase and one
sentence (issue 40). The codes stay in the JSON API and in a page's folded "Details".

Rules for what is written here (issue 42 translates this module):

- Each phrase or sentence is whole: a translator sees it entire, with named placeholders
  (``{source}``, ``{zone}``), never a phrase built by gluing pieces together in code.
- A sentence says the reason that applies, never a list of possible reasons.
- Keys are the codes themselves (``"NEEDS_REVIEW"``, ``"alerts:write"``), so this module
  imports nothing of Trace and any layer may read it; a test checks that every code of
  every enum it covers has its entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

from trace_app.i18n import gettext, lazy_gettext, ngettext


def _lazy(message: str) -> str:
    """``message`` read in the current language each time it is used (a lazy string that
    behaves as a ``str``: ``.format``, ``str()``, Jinja)."""
    return cast(str, lazy_gettext(message))


@dataclass(frozen=True, slots=True)
class Term:
    """One code in plain words: a short ``phrase`` (a badge, a headline) and one
    ``sentence`` that says what it means for the reader. Both are read in the current
    language (issue 42): the English source is ``source_phrase`` and ``source_sentence``,
    the catalogue's message ids."""

    source_phrase: str
    source_sentence: str

    @property
    def phrase(self) -> str:
        return gettext(self.source_phrase)

    @property
    def sentence(self) -> str:
        return gettext(self.source_sentence)


class Words(dict[str, str]):
    """A table of whole sentences by key, read in the current language (``words[key]``,
    ``words.get(key)``); the values held are the English sources (the message ids)."""

    def __getitem__(self, key: str) -> str:
        return gettext(super().__getitem__(key))

    def get(self, key: str, default: Any = None) -> Any:
        found = super().get(key)
        return gettext(found) if found is not None else default


# --- an investigation (a check of where a report's information came from) -------------

CHECK_STATUS: dict[str, Term] = {
    "COMPLETED": Term(
        "Reads as first-hand",
        "The report reads as the writer's own account; that says nothing about whether it is true.",
    ),
    "NEEDS_REVIEW": Term(
        "Needs a person to check",
        "Trace could not settle where this report's information came from, so a person decides.",
    ),
    "PARTIAL": Term(
        "Check stopped early",
        "The check stopped before asking the model, and nothing was saved.",
    ),
    "UNAVAILABLE": Term(
        "Not checked",
        "No model was asked and nothing was sent.",
    ),
    "FAILED": Term(
        "Check failed",
        "The model did not give a usable answer; nothing was saved, and the request counts.",
    ),
    "BUDGET_LIMIT": Term(
        "Model budget used up",
        "This server has used all the model calls it is allowed, so nothing was sent.",
    ),
}

CHECK_MODE: dict[str, Term] = {
    "LIVE": Term("Checked just now", "The model answered this check just now."),
    "CACHED": Term(
        "Checked earlier ({day}), nothing sent",
        "This report was checked on {day} with exactly this text, so the saved result is "
        "shown and no model was asked.",
    ),
    "REPLAYED": Term(
        "Recorded check, nothing sent",
        "A real check recorded for the demo is shown again; no model was asked.",
    ),
}

# the model's label: where the report's information came from
ATTRIBUTION: dict[str, Term] = {
    "DIRECT": Term("First-hand", "The writer says they saw or did this themselves."),
    "RELAY": Term("Passed on", "The report passes on what another source said."),
    "UNCLEAR": Term("Unclear source", "It is unclear where the information came from."),
}

# the comparison of a relay with the report it names
SUPPORT: dict[str, Term] = {
    "SUPPORTS": Term("Source agrees", "The named source's report says the same."),
    "DIFFERS": Term("Source differs", "The named source's report says something different."),
    "UNCLEAR": Term("Comparison unclear", "It is unclear whether the named source agrees."),
}

# The one reason that applies to a result that needs a person, as its headline. The
# placeholders are the named source's organisation ({source}) and the quoted words
# ({words}). Chosen by :func:`needs_review_reason_key`.
NEEDS_REVIEW_REASONS: Words = Words(
    {
        "relay_agrees": (
            "Needs a person to check: the report passes on what {source} said, and {source}'s "
            "report agrees"
        ),
        "relay_differs": (
            "Needs a person to check: the report passes on what {source} said, but {source}'s "
            "report says something different"
        ),
        "relay_compare_unclear": (
            "Needs a person to check: the report passes on what {source} said; it is unclear "
            "whether {source}'s report agrees"
        ),
        "relay_named": "Needs a person to check: the report passes on what {source} said",
        "relay_unnamed": (
            "Needs a person to check: the report passes on information without naming its source"
        ),
        "unclear": "Needs a person to check: it is unclear where the information came from",
        "direct_names_source": (
            "Needs a person to check: it reads as first-hand but also names {source} as its source"
        ),
        "cue_instruction": (
            "Needs a person to check: the text holds words addressed to the model (“{words}”)"
        ),
        "cue_relay": "Needs a person to check: the words “{words}” pass on what someone else said",
        "cue_hearsay": "Needs a person to check: the words “{words}” are vague about the source",
        "no_first_hand": (
            "Needs a person to check: the writer does not say they saw it themselves"
        ),
        "other": "Needs a person to check where this report's information came from",
    }
)

# a result a person decided on: it looks decided (✓), with who and when beside it
DECIDED_HEADLINE: str = _lazy("Decided: {decision}")
DECIDED_BY: str = _lazy("Decided by {who}, {when}.")
DECIDED_BY_NOBODY_NAMED: str = _lazy("Decided by a person (before accounts existed), {when}.")
DECIDED_EARLIER_RUN: str = _lazy(
    "A person decided on an earlier check of this report; this newer result awaits a decision."
)

# --- what happened when Investigate was pressed (said beside the button) ---------------

CHECK_OUTCOME: Words = Words(
    {
        "live": "Checked now: the model answered, and the result below is saved.",
        "live_not_saved": "Checked now: the model was asked, but nothing was saved.",
        "saved": (
            "Checked earlier ({day}) with exactly this text, so nothing was sent: the saved "
            "result is shown."
        ),
        "replayed": "A recorded check is shown; nothing was sent.",
        "saved_wrong_passphrase": (
            "The passphrase was wrong, so nothing was sent. This report was checked earlier "
            "({day}); that saved result is shown."
        ),
        "wrong_passphrase": "The passphrase was wrong, so nothing was sent.",
        "no_passphrase": ("Nothing was sent: type the live-check passphrase to ask the model."),
        "switched_off": "Live checks are switched off on this server, so nothing was sent.",
        "refused": "Not checked: {reason}",
        "stopped": "Check stopped early: {reason}",
        "failed": "The check failed: {reason}",
        "budget": "Nothing was sent: this server's model budget is used up.",
        "not_allowed": (
            "You cannot run a new check: a reviewer, coordinator or admin of this incident can. "
            "A saved result is still shown to you."
        ),
        "busy": "Checking… this can take a few seconds.",
    }
)

# --- people, claims and alerts ----------------------------------------------------------

CLAIM_STATUS: dict[str, Term] = {
    "missing": Term("Missing", "Someone reported this person missing."),
    "seen": Term("Seen", "Someone reported seeing this person."),
    "admitted": Term(
        "In hospital or shelter", "This person was admitted to a hospital or shelter."
    ),
    "safe": Term("Safe", "Someone reported this person safe."),
    "deceased": Term("Deceased", "Someone reported that this person has died."),
}

ALERT_STATE: dict[str, Term] = {
    "open": Term("Alert open", "People are still looking for this person."),
    "closed": Term("Alert closed", "The search for this person has stopped."),
}

ALERT_CLOSE_REASON: dict[str, Term] = {
    "found_safe": Term("Found safe", "The person was found safe."),
    "admitted": Term("Admitted", "The person was admitted to a hospital or shelter."),
    "deceased": Term("Deceased", "The person has died."),
    "duplicate": Term("Duplicate", "The alert repeats another one about the same person."),
    "withdrawn": Term("Withdrawn", "The report that raised it was withdrawn."),
}

LINK_DECISION: dict[str, Term] = {
    "same": Term("Same person", "A person decided that these records are one person."),
    "different": Term("Different people", "A person decided that these are different people."),
    "undecided": Term("Decision withdrawn", "A person withdrew the earlier decision."),
}

REVIEW_DECISION: dict[str, Term] = {
    "first_hand": Term(
        "First-hand confirmed", "A reviewer confirmed the report is a first-hand account."
    ),
    "relay_confirmed": Term("Relay confirmed", "A reviewer confirmed the relay."),
    "not_reliable": Term("Not reliable", "A reviewer judged the report cannot be relied on."),
}

CUE_KIND: dict[str, Term] = {
    "relay": Term("Passed on", "These words pass on what someone else said."),
    "hearsay": Term("Vague source", "These words are vague about where the news came from."),
    "instruction": Term("Words to the model", "These words try to instruct the model."),
    "first_hand": Term("Writer's own account", "These words are the writer's own account."),
}

# --- who may do what ---------------------------------------------------------------------

ROLE: dict[str, Term] = {
    "viewer": Term("Viewer", "Reads the incident's pages."),
    "reporter": Term(
        "Reporter", "Reads the incident and publishes reports for their organisation."
    ),
    "reviewer": Term(
        "Reviewer",
        "Does what a reporter does, and checks reports, decides duplicates and closes alerts.",
    ),
    "coordinator": Term(
        "Coordinator",
        "Does what a reviewer does, and manages the incident's members, imports and exports.",
    ),
    "admin": Term("Admin", "Does everything, and manages accounts and reads the audit trail."),
}

# each permission: what it lets a person do (the phrase), and the one line shown where a
# control is hidden from someone without it: that they cannot, and who can (the sentence)
PERMISSION: dict[str, Term] = {
    "read": Term(
        "Read the incident",
        "You cannot read this incident: you are not one of its members.",
    ),
    "reports:write": Term(
        "Publish reports",
        (
            "You cannot publish reports here. "
            "A reporter, reviewer, coordinator or admin of this incident can."
        ),
    ),
    "reviews:write": Term(
        "Decide on checked reports",
        (
            "You cannot decide on checked reports here. "
            "A reviewer, coordinator or admin of this incident can."
        ),
    ),
    "links:write": Term(
        "Decide whether two records are one person",
        (
            "You cannot decide whether two records are one person here. "
            "A reviewer, coordinator or admin of this incident can."
        ),
    ),
    "alerts:write": Term(
        "Close or reopen alerts",
        (
            "You cannot close or reopen alerts here. "
            "A reviewer, coordinator or admin of this incident can."
        ),
    ),
    "checks:run": Term(
        "Run a new check with the model",
        (
            "You cannot run a new check with the model here. "
            "A reviewer, coordinator or admin of this incident can."
        ),
    ),
    "incidents:write": Term(
        "Create incidents and change their settings",
        "You cannot create incidents or change their settings. An admin for every incident can.",
    ),
    "pfif:read": Term(
        "Export the incident",
        "You cannot export this incident. A coordinator or admin of this incident can.",
    ),
    "pfif:write": Term(
        "Import lists",
        "You cannot import lists here. A coordinator or admin of this incident can.",
    ),
    "members:write": Term(
        "Manage members",
        "You cannot manage this incident's members. A coordinator or admin of this incident can.",
    ),
    "demo:reset": Term(
        "Reset the demo",
        "You cannot reset the demo. A coordinator or admin can.",
    ),
    "contacts:read": Term(
        "Read the contacts of people looking for someone",
        (
            "You cannot read the contacts of people looking for someone here. "
            "A coordinator or admin of this incident can."
        ),
    ),
    "webhooks:write": Term(
        "Manage partner webhooks",
        "You cannot manage this incident's webhooks. A coordinator or admin of this incident can.",
    ),
    "users:write": Term(
        "Manage accounts",
        "You cannot manage accounts. An admin for every incident can.",
    ),
    "audit:read": Term(
        "Read the audit trail",
        "You cannot read the audit trail. An admin for every incident can.",
    ),
}

# --- publishing: what changed (the report page after Publish) ---------------------------

PUBLISHED: Words = Words(
    {
        "new_person": "Report published. It started a new record: {name}.",
        "alert_raised": "An alert was raised: {name} is now listed as missing.",
        "alert_joined": (
            "{name} already had an open alert; this report was added to it as another source."
        ),
        "alert_closed": "The open alert for {name} (raised {raised}) was closed by this report.",
        "no_alert_change": "No alert changed.",
    }
)

# the report joined an existing record: said by how many reports it already had
PUBLISHED_EXISTING_PERSON = (
    "Report published. It was added to the existing record of {name}, which already had "
    "{earlier} earlier report.",
    "Report published. It was added to the existing record of {name}, which already had "
    "{earlier} earlier reports.",
)


def published_existing_person(earlier: int) -> str:
    """The sentence for a report added to an existing record, in the current language, with
    the plural form ``earlier`` needs (placeholders ``{name}`` and ``{earlier}``)."""
    return ngettext(*PUBLISHED_EXISTING_PERSON, earlier)


# --- a "same person" decision: what changed ---------------------------------------------

LINKED: Words = Words(
    {
        "same": "Decision recorded: these records are now shown as one person, {name}.",
        "same_pair": "Decision recorded: these records are now shown as one person.",
        "different": "Decision recorded: these are different people.",
        "undecided": "Decision withdrawn: the records are shown apart again.",
    }
)

# after "Same person": an alert the decision closed, by what the later report says
LINKED_ALERT_CLOSED: Words = Words(
    {
        "safe": (
            "The open alert for {name} (raised {raised}) was closed: a later report about the "
            "same person says they are safe."
        ),
        "admitted": (
            "The open alert for {name} (raised {raised}) was closed: a later report about the "
            "same person says they were admitted to a hospital or shelter."
        ),
        "deceased": (
            "The open alert for {name} (raised {raised}) was closed: a later report about the "
            "same person says they have died."
        ),
    }
)

# --- times -------------------------------------------------------------------------------
# English only: the other languages take CLDR's patterns through Babel (trace_app.i18n)

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# "2 Dec, 14:05 (Kathmandu)"; a year other than this one is named: "25 Apr 2015, 14:30 (...)"
WHEN_THIS_YEAR = "{day} {month}, {clock} ({zone})"
WHEN_OTHER_YEAR = "{day} {month} {year}, {clock} ({zone})"
DAY_THIS_YEAR = "{day} {month}"
DAY_OTHER_YEAR = "{day} {month} {year}"
WHEN_EXACT = "{local} · {utc}"
SHOW_EXACT_TIMES: str = _lazy("Show exact times")

# every table above whose keys are codes, by what the codes are
TABLES: dict[str, dict[str, Term]] = {
    "check_status": CHECK_STATUS,
    "check_mode": CHECK_MODE,
    "attribution": ATTRIBUTION,
    "support": SUPPORT,
    "claim_status": CLAIM_STATUS,
    "alert_state": ALERT_STATE,
    "alert_close_reason": ALERT_CLOSE_REASON,
    "link_decision": LINK_DECISION,
    "review_decision": REVIEW_DECISION,
    "cue_kind": CUE_KIND,
    "role": ROLE,
    "permission": PERMISSION,
}


def term(table: str, code: str) -> Term:
    """The words for ``code`` in ``table`` (``"check_status"``, ``"NEEDS_REVIEW"``); an
    unknown code is shown as itself, so a new code is never hidden."""
    found = TABLES[table].get(str(code))
    return found if found is not None else Term(str(code), str(code))


def phrase(table: str, code: str) -> str:
    return term(table, code).phrase


def sentence(table: str, code: str) -> str:
    return term(table, code).sentence


def who_can(permission: str) -> str:
    """The one line shown where a control is hidden: that the reader cannot, and who can."""
    return sentence("permission", permission)


# the module-level sentences above, by name (each a lazy translation)
SENTENCES = (
    "DECIDED_HEADLINE",
    "DECIDED_BY",
    "DECIDED_BY_NOBODY_NAMED",
    "DECIDED_EARLIER_RUN",
    "SHOW_EXACT_TIMES",
)
WORD_TABLES = (
    "NEEDS_REVIEW_REASONS",
    "CHECK_OUTCOME",
    "PUBLISHED",
    "LINKED",
    "LINKED_ALERT_CLOSED",
)


def catalogue_messages() -> Iterator[str | tuple[str, str]]:
    """Every English source this module holds, for the catalogue (tools/check_catalogue.py)."""
    for table in TABLES.values():
        for found in table.values():
            yield found.source_phrase
            yield found.source_sentence
    for name in WORD_TABLES:
        words: Words = globals()[name]
        yield from dict.values(words)
    for name in SENTENCES:
        yield cast(Any, globals()[name])._args[0]
    yield PUBLISHED_EXISTING_PERSON
