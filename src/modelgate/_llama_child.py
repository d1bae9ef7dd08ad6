"""Entry point of the local model server child process (``python -m modelgate._llama_child``).

It runs llama-cpp-python's own OpenAI-compatible server (``llama_cpp.server``) with the
arguments it was given, after one adjustment: unless ``MODELGATE_LLAMA_EXTRA_BUFFERS=1``,
llama.cpp's "extra buffer types" (runtime weight repacking and the AMX path) are turned
off. With them on, the source-built 0.3.36 wheel crashes with SIGSEGV on the first
batched decode on CPUs that report AMX (measured on the project's Xeon build machine;
see docs/decisions/0051-local-server-safe-cpu-path.md). For a 135M model the plain CPU
path costs little.

JSON schemas sent as ``response_format`` get small ``maxLength`` and ``maxItems`` bounds
before llama-cpp-python turns them into a grammar: its converter unrolls each bound into
that many nested optional rules, and Viano's output schema (strings up to thousands of
characters, lists up to hundreds of items) crashed the server; with no bound at all the
small model loops in a list until its token limit. A smaller bound only narrows what the
schema allows, and the caller still validates every answer against the full schema
(docs/decisions/0052-llama-grammar-small-bounds.md).

Enum values and property names reach the grammar as GBNF string literals escaped in full
(quotes, backslashes, control characters; :func:`gbnf_literal`): llama-cpp-python's
own converter left backslashes alone, so a source name such as ``Shanti "Peace" Clinic``
made a grammar llama.cpp could not parse, and the server died.

Inside a JSON string the grammar admits only what JSON does: no raw control character
(a line break, a tab), which llama-cpp-python's converter let through, so an answer
holding one could not be parsed and was lost (docs/decisions/0078).

When ``MODELGATE_PARENT_PID`` is set (``LocalModelServer`` sets it), a watchdog thread
ends this process as soon as that parent is gone, so a parent killed without cleanup
(SIGKILL, a crash) leaves no orphaned model server behind.

Only :mod:`modelgate.local_server` starts this module; it imports ``llama_cpp``, which
the rest of modelgate never does.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import threading
import time
from typing import Any

# llama-cpp-python unrolls a bound of N into N nested optional rules; the grammar keeps
# bounds this small at most (a stricter grammar only narrows answers the schema allows).
GRAMMAR_BOUNDS = {"maxLength": 240, "maxItems": 6}

PARENT_PID_ENV = "MODELGATE_PARENT_PID"


def _disable_extra_buffer_types() -> None:
    import llama_cpp.llama_cpp as low_level

    default_params = low_level.llama_model_default_params

    def params_without_extra_buffers() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = params_without_extra_buffers


def grammar_schema(schema: Any, *, names: bool = False) -> Any:
    """A copy of a JSON schema whose ``maxLength``/``maxItems`` are clamped to
    :data:`GRAMMAR_BOUNDS` (never below the matching ``minLength``/``minItems``).

    ``names`` is true for the mapping under ``properties`` (or ``$defs``), whose keys are
    property names, never keywords, and are kept as they are.
    """
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copied = {
        key: grammar_schema(value, names=key in ("properties", "$defs", "definitions"))
        for key, value in schema.items()
    }
    if not names:
        for bound, cap in GRAMMAR_BOUNDS.items():
            value = copied.get(bound)
            if isinstance(value, int) and value > cap:
                floor = copied.get(bound.replace("max", "min"), 0)
                copied[bound] = max(cap, floor if isinstance(floor, int) else 0)
    return copied


# GBNF string literals: llama.cpp's parser reads these escapes. llama-cpp-python 0.3.36
# escapes only CR, LF and '"', so a backslash in a literal (every JSON escape of an enum
# value holding '"' or '\\') ended the literal early and the child died on the parse.
_GBNF_ESCAPES = {"\r": "\\r", "\n": "\\n", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
_GBNF_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f\x7f"\\]')


def gbnf_literal(text: str) -> str:
    """``text`` as one GBNF string literal, every character llama.cpp's parser treats
    specially escaped (quotes, backslashes, control characters)."""

    def escape(match: re.Match[str]) -> str:
        ch = match.group(0)
        return _GBNF_ESCAPES.get(ch) or f"\\x{ord(ch):02x}"

    return '"' + _GBNF_NEEDS_ESCAPE.sub(escape, text) + '"'


# One character of a JSON string as JSON allows it: anything but '"', a backslash and the
# control characters U+0000-U+001F (and DEL), or an escape. llama-cpp-python 0.3.36's
# rule was ``[^"\\] | "\\" (...)``: a raw line break or tab inside a string was
# allowed, and an answer holding one is not JSON (``malformed_answer``, lost). This is
# the rule of llama.cpp's own converter.
JSON_STRING_CHAR = (
    r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] '
    r"[0-9a-fA-F])"
)


def gbnf_for_schema(schema: str, prop_order: Any = None) -> str:
    """llama-cpp-python's ``json_schema_to_gbnf`` with three fixes: bounds clamped
    (:func:`grammar_schema`), literals escaped (:func:`gbnf_literal`) and no raw control
    character inside a string (:data:`JSON_STRING_CHAR`)."""
    grammar: Any = importlib.import_module("llama_cpp.llama_grammar")  # untyped

    class Converter(grammar.SchemaConverter):  # type: ignore[misc]
        def _format_literal(self, literal: str) -> str:
            return gbnf_literal(literal)

        def _add_primitive(self, name: str, rule: Any) -> Any:
            if name == "char":
                rule = grammar.BuiltinRule(JSON_STRING_CHAR, [])
            return super()._add_primitive(name, rule)

    order = {name: index for index, name in enumerate(prop_order or [])}
    converter = Converter(prop_order=order, allow_fetch=False, dotall=False, raw_pattern=False)
    resolved = converter.resolve_refs(grammar_schema(json.loads(schema)), "stdin")
    converter.visit(resolved, "")
    text: str = converter.format_grammar()
    return text


def _install_grammar_fixes() -> None:
    import llama_cpp.llama_grammar as grammar

    # LlamaGrammar.from_json_schema and the chat formats look the function up here
    grammar.json_schema_to_gbnf = gbnf_for_schema


def _exit_with_parent(parent_pid: int, poll_s: float = 1.0) -> None:
    while os.getppid() == parent_pid:
        time.sleep(poll_s)
    os._exit(0)


def main() -> None:
    parent = os.environ.get(PARENT_PID_ENV, "")
    if parent.isdigit():
        threading.Thread(
            target=_exit_with_parent, args=(int(parent),), name="parent-watch", daemon=True
        ).start()
    if os.environ.get("MODELGATE_LLAMA_EXTRA_BUFFERS", "") != "1":
        _disable_extra_buffer_types()
    _install_grammar_fixes()
    from llama_cpp.server.__main__ import main as serve

    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
