"""Versioned prompt files shipped as package data.

A prompt file is UTF-8 text whose first line declares its version::

    prompt-version: report-lineage-v4

    You label how a report attributes its information ...  $report_text ...

The version (letters, digits, ``.``, ``_``, ``-``) goes into every request's
``prompt_version`` and so into its fingerprint; ``Prompt.sha256`` pins the exact text
as well. One blank line after the header is optional and not part of the text.
``Prompt.render`` substitutes ``$name`` placeholders (``string.Template``) and refuses
a missing value: substituted text is data and is never re-scanned for placeholders.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from importlib import resources

_HEADER = re.compile(r"^prompt-version:[ \t]*(?P<version>[A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*$")


class PromptError(ValueError):
    """A prompt file is missing, unreadable or does not declare a version."""


@dataclass(frozen=True, slots=True)
class Prompt:
    version: str
    text: str
    source: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def placeholders(self) -> frozenset[str]:
        names = set()
        for match in string.Template.pattern.finditer(self.text):
            name = match.group("named") or match.group("braced")
            if name:
                names.add(name)
        return frozenset(names)

    def render(self, **values: str) -> str:
        """The text with every ``$name`` replaced; ``PromptError`` if one is missing or
        a value is given that the prompt does not use."""
        unused = set(values) - self.placeholders
        if unused:
            raise PromptError(f"{self.source}: no placeholder for {sorted(unused)}")
        try:
            return string.Template(self.text).substitute(values)
        except KeyError as exc:
            raise PromptError(f"{self.source}: missing value for ${exc.args[0]}") from None
        except ValueError as exc:
            raise PromptError(f"{self.source}: invalid placeholder: {exc}") from None


def parse_prompt(content: str, source: str) -> Prompt:
    first, _, rest = content.partition("\n")
    match = _HEADER.match(first.rstrip("\r"))
    if match is None:
        raise PromptError(f"{source}: the first line must be 'prompt-version: <version>'")
    if rest.startswith("\r\n"):
        rest = rest[2:]
    elif rest.startswith("\n"):
        rest = rest[1:]
    if not rest.strip():
        raise PromptError(f"{source}: the prompt text is empty")
    return Prompt(version=match.group("version"), text=rest, source=source)


def load_prompt(package: str, filename: str) -> Prompt:
    """Load ``filename`` shipped inside ``package``.

    ``filename`` is relative to the package folder and may name a sub-folder with ``/``
    (``load_prompt("modelgate", "prompts/demo_label_v1.txt")``); ``..``, absolute paths
    and backslashes are refused.
    """
    parts = filename.split("/")
    if (
        not filename
        or "\\" in filename
        or filename.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise PromptError(f"prompt filename {filename!r} must be a relative path in the package")
    source = f"{package}/{filename}"
    try:
        node = resources.files(package)
        for part in parts:
            node = node.joinpath(part)
        content = node.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, IsADirectoryError) as exc:
        raise PromptError(f"{source}: not found ({type(exc).__name__})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"{source}: unreadable ({exc})") from None
    return parse_prompt(content, source)
