"""Menu names reach llama.cpp's grammar and the JSON schema correctly escaped.

A source name holding ``"`` or ``\\`` (``Shanti "Peace" Clinic``) once made
llama-cpp-python write a GBNF literal that llama.cpp could not parse, and the server
child crashed. For arbitrary Unicode names (quotes, backslashes, control characters,
emoji, right-to-left scripts):

- the JSON schema sent upstream holds the names exactly (a JSON round trip);
- every literal of the grammar's source-name rule, read back with GBNF's escape rules,
  is the JSON text of one name, and together they are the menu plus NONE;
- llama.cpp's own parser accepts the whole grammar (with the embedded model's
  vocabulary, loaded without weights), where the runtime is installed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from modelgate.answers import output_schema
from trace_app.investigation.answers import NO_SOURCE, attribution_result_type

llama_grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="llama.cpp not installed")

from modelgate._llama_child import (  # noqa: E402
    JSON_STRING_CHAR,
    gbnf_for_schema,
    grammar_schema,
)

NAMES = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40
)
MENUS = st.lists(NAMES, min_size=1, max_size=8, unique=True).filter(lambda m: NO_SOURCE not in m)
GBNF_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "[": "[", "]": "]"}
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def unescape_gbnf(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif nxt == "U":
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        else:
            out.append(GBNF_ESCAPES[nxt])
            i += 2
    return "".join(out)


def source_rule(gbnf: str) -> str:
    for line in gbnf.split("\n"):  # not splitlines(): names may hold U+2028, U+0085
        name, _, rule = line.partition(" ::= ")
        if name.startswith("referenced-source"):
            return rule
    raise AssertionError(f"no referenced-source rule in:\n{gbnf}")


def grammar_for(menu: list[str]) -> tuple[dict[str, Any], str]:
    schema = output_schema(attribution_result_type(tuple(menu)))
    wire = json.loads(json.dumps(schema))  # what the provider sends
    return wire, gbnf_for_schema(json.dumps(grammar_schema(wire)))


@pytest.fixture(scope="module")
def llama_vocab() -> Any:
    from modelgate.local_server import LocalModelMissing, find_embedded_model

    try:
        path = find_embedded_model()
    except LocalModelMissing as error:
        pytest.skip(error.message)
    from llama_cpp import Llama

    return Llama(model_path=str(path), vocab_only=True, verbose=False)


def llama_parses(vocab_model: Any, gbnf: str) -> bool:
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(
        vocab_model._model.vocab, gbnf.encode("utf-8"), b"root"
    )
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(menu=MENUS)
@example(menu=['Shanti "Peace" Clinic'])
@example(menu=["C:\\relief\\camp", 'a\\"b', "\\"])
@example(menu=["tab\there", "line\nbreak", "bell\x07", "nul\x00x"])
@example(menu=["🚑 Ambulance 🏥", "مستشفى السلام", "בית חולים", "\u202eevil"])
def test_menu_names_are_escaped_in_schema_and_grammar(menu: list[str]) -> None:
    wire, gbnf = grammar_for(menu)
    enum = wire["properties"]["referenced_source"]["enum"]
    assert enum == [*menu, NO_SOURCE]
    literals = [unescape_gbnf(m.group(1)) for m in LITERAL.finditer(source_rule(gbnf))]
    assert sorted(json.loads(lit) for lit in literals) == sorted([*menu, NO_SOURCE])


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(menu=MENUS)
@example(menu=['Shanti "Peace" Clinic', "C:\\relief\\camp", "🚑 مستشفى"])
def test_llama_cpp_parses_the_grammar(llama_vocab: Any, menu: list[str]) -> None:
    _wire, gbnf = grammar_for(menu)
    assert llama_parses(llama_vocab, gbnf), gbnf


def test_unpatched_converter_breaks_on_a_quote_and_backslash(llama_vocab: Any) -> None:
    """The failure this guards against: llama-cpp-python 0.3.36 alone escapes ``"`` but
    not ``\\``, so the name's JSON escape ends the GBNF literal early."""
    schema = output_schema(attribution_result_type(('Shanti "Peace" Clinic',)))
    original = llama_grammar.SchemaConverter._format_literal
    broken = original.__globals__["GRAMMAR_LITERAL_ESCAPE_RE"]
    assert broken.pattern == r'[\r\n"]'  # the shipped converter, unchanged by the fix
    assert not llama_parses(llama_vocab, _unpatched_gbnf(schema))


def _unpatched_gbnf(schema: dict[str, Any]) -> str:
    converter = llama_grammar.SchemaConverter(
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    converter.visit(schema, "")
    text: str = converter.format_grammar()
    return text


def test_strings_hold_no_raw_control_character(llama_vocab: Any) -> None:
    """Every string of the grammar is made of ``char``, and ``char`` admits what JSON
    does: no raw control character (a raw line break inside a string made an answer
    that is not JSON; llama-cpp-python 0.3.36's rule was ``[^"\\\\] | ...``)."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["a", "b"],
        "properties": {"a": {"type": "string", "maxLength": 30}, "b": {"type": "string"}},
    }
    gbnf = gbnf_for_schema(json.dumps(schema))
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines() if " ::= " in line)
    assert rules["char"] == JSON_STRING_CHAR
    assert "char" in rules["string"] and "char" in rules["a"]
    shipped = llama_grammar.PRIMITIVE_RULES["char"].content
    unescaped_class = re.compile(JSON_STRING_CHAR.split(" | ")[0])  # a valid Python class
    for raw in ("\n", "\r", "\t", "\x00", "\x1f", "\x7f", '"', "\\"):
        assert not unescaped_class.fullmatch(raw), repr(raw)
        assert re.compile(shipped.split(" | ")[0]).fullmatch(raw) or raw in '"\\'
    for fine in ("a", "é", "漢", "😀", " ", "/"):
        assert unescaped_class.fullmatch(fine)
    assert llama_parses(llama_vocab, gbnf), gbnf
