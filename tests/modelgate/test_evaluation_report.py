"""The shared figures of both ``eval`` commands (modelgate.evaluation_report)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelgate.evaluation_report import (
    confusion,
    confusion_lines,
    counts,
    percent,
    share,
    write_report,
)


def test_share_and_percent() -> None:
    assert share(1, 3) == 0.3333
    assert share(0, 0) is None
    assert percent(0.125) == "12.5%"
    assert percent(None) == "n/a"


def test_counts_are_keyed_by_text_in_key_order() -> None:
    assert counts(["b", "a", "b", 3]) == {"3": 1, "a": 1, "b": 2}
    assert list(counts(["z", "y"])) == ["y", "z"]
    assert counts([]) == {}


def test_confusion_has_every_cell_and_refuses_an_unexpected_label() -> None:
    matrix = confusion(("A", "B"), ("A", "B", "X"), [("A", "A"), ("A", "X"), ("A", "X")])
    assert matrix == {"A": {"A": 1, "B": 0, "X": 2}, "B": {"A": 0, "B": 0, "X": 0}}
    with pytest.raises(KeyError):
        confusion(("A",), ("A",), [("A", "Z")])
    with pytest.raises(KeyError):
        confusion(("A",), ("A",), [("Q", "A")])


def test_confusion_lines_align_every_cell() -> None:
    matrix = confusion(("A", "BB"), ("A", "BB"), [("BB", "A")])
    assert confusion_lines(matrix, ("A", "BB"), "exp", 4) == [
        "exp    A  BB",
        "A      0   0",
        "BB     1   0",
    ]


def test_write_report_is_indented_utf8_json_and_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("old")
    write_report({"name": "Wasserstraße", "n": [1, 2]}, path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and "Wasserstraße" in text and '\n  "n": [' in text
    assert json.loads(text) == {"name": "Wasserstraße", "n": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temp file left
