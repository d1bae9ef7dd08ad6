"""Entry point of the local model server child process (``python -m modelgate._llama_child``).

It runs llama-cpp-python's own OpenAI-compatible server (``llama_cpp.server``) with the
arguments it was given, after one adjustment: unless ``MODELGATE_LLAMA_EXTRA_BUFFERS=1``,
llama.cpp's "extra buffer types" (runtime weight repacking and the AMX path) are turned
off. With them on, the source-built 0.3.36 wheel crashes with SIGSEGV on the first
batched decode on CPUs that report AMX (measured on the project's Xeon build machine;
see docs/decisions/0051-local-server-safe-cpu-path.md). For a 135M model the plain CPU
path costs little.

Only :mod:`modelgate.local_server` starts this module; it imports ``llama_cpp``, which
the rest of modelgate never does.
"""

from __future__ import annotations

import os
from typing import Any


def _disable_extra_buffer_types() -> None:
    import llama_cpp.llama_cpp as low_level

    default_params = low_level.llama_model_default_params

    def params_without_extra_buffers() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = params_without_extra_buffers


def main() -> None:
    if os.environ.get("MODELGATE_LLAMA_EXTRA_BUFFERS", "") != "1":
        _disable_extra_buffer_types()
    from llama_cpp.server.__main__ import main as serve

    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
