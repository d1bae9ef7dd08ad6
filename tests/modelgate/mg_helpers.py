"""Shared pieces for modelgate tests: an output type and a request."""

from __future__ import annotations

import enum

from pydantic import BaseModel

from modelgate.answers import output_schema
from modelgate.types import Message, ModelRequest


class Colour(enum.StrEnum):
    RED = "RED"
    GREEN = "GREEN"


class Label(BaseModel):
    colour: Colour
    note: str


GOOD_ANSWER = '{"colour": "RED", "note": "seen"}'


def make_request(
    text: str = "Which colour is a ripe tomato?", version: str = "test-v1"
) -> ModelRequest:
    return ModelRequest(
        messages=(Message("system", "Answer with JSON."), Message("user", text)),
        output_name="Label",
        output_schema=output_schema(Label),
        prompt_version=version,
        temperature=0.0,
        max_output_tokens=32,
    )
