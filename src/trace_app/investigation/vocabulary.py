"""Statuses and result modes of an investigation, with the plain words shown to people.

This module is the one place that says what each status and mode means. Templates, the
JSON API and the CLI all read the meanings from here.
"""

from __future__ import annotations

import enum


class Status(enum.StrEnum):
    """How an investigation ended. Only COMPLETED and NEEDS_REVIEW are ever saved."""

    COMPLETED = "COMPLETED"
    NEEDS_REVIEW = "NEEDS_REVIEW"
    PARTIAL = "PARTIAL"
    UNAVAILABLE = "UNAVAILABLE"
    FAILED = "FAILED"
    BUDGET_LIMIT = "BUDGET_LIMIT"

    @property
    def saved(self) -> bool:
        return self in SAVED_STATUSES

    @property
    def refused(self) -> bool:
        return self in REFUSED_STATUSES

    @property
    def meaning(self) -> str:
        return STATUS_MEANINGS[self]

    @property
    def next_step(self) -> str:
        return NEXT_STEPS[self]

    @property
    def icon(self) -> str:
        return STATUS_ICONS[self]

    @property
    def headline(self) -> str:
        return STATUS_HEADLINES[self]


class Refusal(enum.StrEnum):
    """Why a live check was UNAVAILABLE, so the card gives the one next step that applies."""

    SWITCHED_OFF = "switched_off"
    PASSPHRASE = "passphrase"  # noqa: S105 (a refusal kind, not a secret)
    NOT_CONFIGURED = "not_configured"
    MODEL_DOWN = "model_down"

    @property
    def next_step(self) -> str:
        return REFUSAL_NEXT_STEPS[self]


class Mode(enum.StrEnum):
    """Where a result came from."""

    LIVE = "LIVE"
    CACHED = "CACHED"
    REPLAYED = "REPLAYED"

    @property
    def meaning(self) -> str:
        return MODE_MEANINGS[self]

    @property
    def icon(self) -> str:
        return MODE_ICONS[self]

    @property
    def label(self) -> str:
        return MODE_LABELS[self]


SAVED_STATUSES = frozenset({Status.COMPLETED, Status.NEEDS_REVIEW})
# A refused check asked no model: the report's most recent saved run is shown beside it
# (docs/decisions/0033).
REFUSED_STATUSES = frozenset({Status.UNAVAILABLE, Status.BUDGET_LIMIT})

STATUS_MEANINGS: dict[Status, str] = {
    Status.COMPLETED: (
        "The report reads as a first-hand account. This says nothing about whether it is true."
    ),
    Status.NEEDS_REVIEW: (
        "A person should decide: the attribution is unclear, the source it names cannot be "
        "pinned to one report, or it relays another report and the two were compared."
    ),
    Status.PARTIAL: (
        "The check stopped early and nothing was saved: the report text (or the text of the "
        "report it relays) is missing or longer than 3,000 characters, it names too many "
        "other sources, or the comparison with the named source did not succeed."
    ),
    Status.UNAVAILABLE: (
        "No model was asked: live checks are switched off, the passphrase was missing or "
        "wrong, the key or model client is missing, or the request ledger is busy or "
        "unreadable."
    ),
    Status.FAILED: (
        "The model call failed, ran past its time limit or answered with a label that is not "
        "allowed. The request still counts against the cap; nothing was saved."
    ),
    Status.BUDGET_LIMIT: (
        "This server has used up its request cap for model calls. No model was asked."
    ),
}

# The result card's headline in plain words (before any person's decision; see
# trace_app.investigation.review_queue.card_headline).
STATUS_HEADLINES: dict[Status, str] = {
    Status.COMPLETED: "First-hand account",
    Status.NEEDS_REVIEW: "Needs review",
    Status.PARTIAL: "Stopped early",
    Status.UNAVAILABLE: "Not checked",
    Status.FAILED: "Check failed",
    Status.BUDGET_LIMIT: "Model budget used up",
}

# What a responder does next, shown right after the status on the result card.
NEXT_STEPS: dict[Status, str] = {
    Status.COMPLETED: (
        "You can treat it as the writer's own account of what they saw or did. It can "
        "still be wrong: confirm anything critical before acting on it."
    ),
    Status.NEEDS_REVIEW: (
        "Read the report and the marked words, decide for yourself where the information "
        "came from, and contact the source before relying on it."
    ),
    Status.PARTIAL: (
        "Nothing was saved. Check that the report (and any report it relays) has text "
        "under 3,000 characters, then try again, or read it yourself."
    ),
    Status.UNAVAILABLE: (
        "Nothing was sent. Check the passphrase or ask the operator to turn live checks "
        "on; an earlier saved result, if any, is shown below."
    ),
    Status.FAILED: (
        "Nothing was saved and the request still counts. Try again later, or read the "
        "report yourself."
    ),
    Status.BUDGET_LIMIT: (
        "Nothing was sent: this server's model budget is used up. Read the report "
        "yourself, or ask the operator."
    ),
}

# The next step of an UNAVAILABLE check, by the reason that applies (never a list of them).
REFUSAL_NEXT_STEPS: dict[Refusal, str] = {
    Refusal.SWITCHED_OFF: (
        "Nothing was sent: live checks are off on this server. Read the report yourself, or "
        "ask the operator to turn them on; an earlier saved result, if any, is shown below."
    ),
    Refusal.PASSPHRASE: (
        "Nothing was sent. Type the live-check passphrase again, or ask the person who runs "
        "this server for it; an earlier saved result, if any, is shown below."
    ),
    Refusal.NOT_CONFIGURED: (
        "Nothing was sent: the model is not set up on this server. Ask the operator."
    ),
    Refusal.MODEL_DOWN: (
        "Nothing was sent: the model is not answering right now. Try again in a few minutes, "
        "or read the report yourself."
    ),
}

# Shapes beside the words on the result card, so that no status or mode is told apart by
# colour alone (each is distinct; the words are always shown too).
STATUS_ICONS: dict[Status, str] = {
    Status.COMPLETED: "✓",
    Status.NEEDS_REVIEW: "?",
    Status.PARTIAL: "…",
    Status.UNAVAILABLE: "–",
    Status.FAILED: "✕",
    Status.BUDGET_LIMIT: "■",
}
MODE_ICONS: dict[Mode, str] = {Mode.LIVE: "●", Mode.CACHED: "↺", Mode.REPLAYED: "▶"}
MODE_LABELS: dict[Mode, str] = {
    Mode.LIVE: "LIVE: answered now",
    Mode.CACHED: "CACHED: saved earlier",
    Mode.REPLAYED: "REPLAYED: recorded run",
}

MODE_MEANINGS: dict[Mode, str] = {
    Mode.LIVE: "Answered by the model just now.",
    Mode.CACHED: "A run saved earlier for exactly this content, shown again without a new call.",
    Mode.REPLAYED: (
        "A recorded real model run shipped with the demo, re-created at reset because the "
        "report content still matches what was recorded."
    ),
}
