"""Entry point of the local model server child process (``python -m modelgate._llama_child``).

It runs llama-cpp-python's own OpenAI-compatible server (``llama_cpp.server``) with the
arguments it was given, after one adjustment: unless ``MODELGATE_LLAMA_EXTRA_BUFFERS=1``,
llama.cpp's "extra buffer types" (runtime weight repacking and the AMX path) are turned
off. With them on, the source-built 0.3.36 wheel crashes with SIGSEGV on the first
batched decode on CPUs that report AMX (measured on the project's Xeon build machine;
see docs/decisions/0051-local-server-safe-cpu-path.md). For a 135M model the plain CPU
path costs little.

JSON schemas sent as ``response_format`` lose their ``maxLength`` and ``maxItems`` bounds
before llama-cpp-python turns them into a grammar: its converter unrolls each bound into
that many nested optional rules, and Viano's output schema (strings up to thousands of
characters, lists up to hundreds of items) then crashed the server. The bounds are still
enforced where they belong: the caller validates every answer against the full schema
(docs/decisions/0052-llama-grammar-without-size-bounds.md).

When ``MODELGATE_PARENT_PID`` is set (``LocalModelServer`` sets it), a watchdog thread
ends this process as soon as that parent is gone, so a parent killed without cleanup
(SIGKILL, a crash) leaves no orphaned model server behind.

Only :mod:`modelgate.local_server` starts this module; it imports ``llama_cpp``, which
the rest of modelgate never does.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

UNROLLED_BOUNDS = frozenset({"maxLength", "maxItems"})

PARENT_PID_ENV = "MODELGATE_PARENT_PID"


def _disable_extra_buffer_types() -> None:
    import llama_cpp.llama_cpp as low_level

    default_params = low_level.llama_model_default_params

    def params_without_extra_buffers() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = params_without_extra_buffers


def without_size_bounds(schema: Any, *, names: bool = False) -> Any:
    """A copy of a JSON schema without ``maxLength``/``maxItems`` keywords.

    ``names`` is true for the mapping under ``properties`` (or ``$defs``), whose keys are
    property names, never keywords, and are kept whatever they are called.
    """
    if isinstance(schema, dict):
        return {
            key: without_size_bounds(value, names=key in ("properties", "$defs", "definitions"))
            for key, value in schema.items()
            if names or key not in UNROLLED_BOUNDS
        }
    if isinstance(schema, list):
        return [without_size_bounds(item) for item in schema]
    return schema


def _grammar_without_size_bounds() -> None:
    import llama_cpp.llama_grammar as grammar

    convert = grammar.json_schema_to_gbnf

    def json_schema_to_gbnf(schema: str, prop_order: Any = None) -> str:
        relaxed = json.dumps(without_size_bounds(json.loads(schema)))
        result: str = convert(relaxed, prop_order)
        return result

    grammar.json_schema_to_gbnf = json_schema_to_gbnf


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
    _grammar_without_size_bounds()
    from llama_cpp.server.__main__ import main as serve

    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
