"""The JSON fast paths (orjson) fall back to the standard library on what orjson
refuses, so the accepted set and the refusals stay those of ``json``."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from modelgate.answers import parse_answer
from modelgate.errors import MalformedAnswer
from modelgate.providers.openai_http import decode_body, encode_body


class Count(BaseModel):
    n: int
    word: str


def test_encode_body_is_json_of_the_same_value() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": 'é \u2028 "q"'}], "t": 0.5}
    assert json.loads(encode_body(body)) == body


def test_encode_body_falls_back_for_what_orjson_refuses() -> None:
    body = {"big": 2**70, 1: "int key"}
    assert json.loads(encode_body(body)) == {"big": 2**70, "1": "int key"}


def test_decode_body_reads_what_only_the_standard_decoder_reads() -> None:
    assert decode_body(b'{"big": 1180591620717411303424}') == {"big": 2**70}


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_decode_body_refuses_non_finite_constants(token: bytes) -> None:
    with pytest.raises(ValueError):
        decode_body(b'{"x": ' + token + b"}")


def test_decode_body_refuses_invalid_utf8() -> None:
    with pytest.raises(ValueError):
        decode_body(b'{"x": "\xff"}')


def test_parse_answer_takes_a_big_integer_through_the_fallback() -> None:
    assert parse_answer(f'{{"n": {2**70}, "word": "w"}}', Count) == Count(n=2**70, word="w")


@pytest.mark.parametrize("token", ["NaN", "Infinity"])
def test_parse_answer_still_refuses_non_finite_constants(token: str) -> None:
    with pytest.raises(MalformedAnswer):
        parse_answer(f'{{"n": {token}, "word": "w"}}', Count)
