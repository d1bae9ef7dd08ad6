"""checked_case: the hash check comes first, then the parse, on both sides of the size
from which the hash runs on a thread of its own (BackgroundSha256)."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest

from viano_bug_analysis.analysis import InterpretationError, case_access
from viano_bug_analysis.analysis.case_access import checked_case
from viano_bug_analysis.case.canonical import CASE_FORMAT


@pytest.mark.parametrize("padding", [10, (1 << 20) + 10])  # serial, then parallel
def test_hash_then_parse_in_that_order(padding: int) -> None:
    good = json.dumps({"case_format": CASE_FORMAT, "pad": "x" * padding}).encode()
    bad = b"{" + b"x" * padding  # not JSON
    assert (len(good) >= case_access._PARALLEL_HASH_BYTES) == (padding > 1 << 20)

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    digest, document = checked_case(good, sha(good))
    assert digest == sha(good) and document["pad"] == "x" * padding
    for data in (good, bad):  # a wrong hash wins over whatever the bytes hold
        with pytest.raises(InterpretationError) as info:
            checked_case(data, "0" * 64)
        assert info.value.code == "interpretation.case_hash_mismatch"
    with pytest.raises(InterpretationError) as info:
        checked_case(bad, sha(bad))
    assert info.value.code == "interpretation.case_invalid"
    # the hashing thread ends whatever the outcome
    for _ in range(200):
        if not [t for t in threading.enumerate() if t.name == "viano-sha256"]:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("a viano-sha256 thread is still running")
