"""Where Person Finder's own code is, and its PFIF validator loaded under Python 3.

The oracle (unmodified files of github.com/google/personfinder, Apache-2.0) is read from
``PERSONFINDER_DIR``, else ``<repo>/../shared/oracles/personfinder`` (where CI has it),
else ``<repo>/../personfinder`` (a checkout beside the repository). It is never copied
into the repository. Tests that need it skip, naming every place looked in, only when
none of them exists.

Person Finder's tools are Python 2. :func:`load_validator` changes only Python 2
spellings, in memory (``urlparse``, ``inspect.getargspec``, ``Element.getchildren()``,
``iterator.next()``); the validator's checks run as written.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]

PY2_SPELLINGS = (
    (re.compile(r"\bfrom urlparse import urlparse\b"), "from urllib.parse import urlparse"),
    (re.compile(r"\binspect\.getargspec\("), "inspect.getfullargspec("),
    (re.compile(r"([A-Za-z_][\w.]*(?:\(\))?)\.getchildren\(\)"), r"list(\1)"),
    (re.compile(r"\b(\w+)\.next\(\)"), r"next(\1)"),
)


def candidates() -> list[Path]:
    configured = os.environ.get("PERSONFINDER_DIR")
    if configured:
        return [Path(configured)]
    return [REPO.parent / "shared" / "oracles" / "personfinder", REPO.parent / "personfinder"]


def oracle_dir() -> Path:
    """The first place that holds Person Finder's code; skips (naming them) when none."""
    for place in candidates():
        if (place / "app" / "pfif.py").is_file():
            return place
    looked = ", ".join(str(p) for p in candidates())
    pytest.skip(f"Person Finder's code is not in any of: {looked} (set PERSONFINDER_DIR)")


def _load(path: Path, name: str) -> types.ModuleType:
    source = path.read_text(encoding="utf-8")
    for pattern, replacement in PY2_SPELLINGS:
        source = pattern.sub(replacement, source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def load_validator() -> Any:
    """Person Finder's ``PfifValidator`` class (PFIF 1.1 to 1.3)."""
    app = oracle_dir() / "tools" / "pfif-tools" / "app"
    if not (app / "pfif_validator.py").is_file():
        pytest.fail(f"{app} has no pfif_validator.py: the oracle folder is incomplete")
    saved = sys.modules.get("utils")
    try:
        _load(app / "utils.py", "utils")  # the validator imports it by this name
        validator = _load(app / "pfif_validator.py", "personfinder_pfif_validator")
    finally:
        if saved is not None:
            sys.modules["utils"] = saved
        else:
            sys.modules.pop("utils", None)
    return validator.PfifValidator


def validate(document: bytes) -> list[Any]:
    """Every message Person Finder's validator gives ``document`` (errors and warnings)."""
    import io

    validator = load_validator()(io.StringIO(document.decode("utf-8")))
    return list(validator.run_validations())
