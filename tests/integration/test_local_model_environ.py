"""The real llama.cpp child's environment holds no secret (read from /proc/<pid>/environ).

The session's server was started by this test process, whose environment may hold a
passphrase or keys; the child must have only the allow-listed system variables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from modelgate.local_server import (
    CHILD_ENV_NAMES,
    CHILD_ENV_PREFIXES,
    SECRET_MARKERS,
    LocalModelServer,
)

pytestmark = [pytest.mark.localmodel]


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_real_child_environment_has_only_allowed_names(
    local_model_server: LocalModelServer,
) -> None:
    assert local_model_server.pid is not None
    raw = Path(f"/proc/{local_model_server.pid}/environ").read_bytes()
    names = {item.split(b"=", 1)[0].decode() for item in raw.split(b"\0") if b"=" in item}
    extra = {"PYTHONUNBUFFERED", "OMP_WAIT_POLICY", "MODELGATE_PARENT_PID"}
    for name in names:
        assert name in CHILD_ENV_NAMES | extra or name.startswith(CHILD_ENV_PREFIXES), name
        assert not any(marker in name.upper() for marker in SECRET_MARKERS), name
    assert "TRACE_LIVE_PASSPHRASE" not in names and "NVIDIA_NIM_API_KEY" not in names
