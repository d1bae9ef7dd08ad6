"""Check that the docs name only things that exist (issue 38, build item 4).

Reads README.md, docs/*.md and docs/decisions/*.md and fails (exit 1, one line per
problem: ``file:line: what``) when one of them names something that does not exist:

- a **command** in backticks or in a shell code block: ``trace ...``, ``viano ...``
  (each subcommand and each ``--option`` is looked up in the real Typer apps, which
  are imported: ``trace --help`` is kept fast, so this is too), ``make TARGET`` (the
  Makefile's targets), ``python bench/x.py --opt`` (the script exists and names the
  option);
- an **option** alone (``--skip-invalid``): an option of some ``trace`` or ``viano``
  command, or one that the code, the benchmarks or the Makefile pass on (``--no-deps``);
- a **file path** (``src/trace_app/cli.py``, ``domain/identity.py``, ``bench/bench_*.py``,
  globs allowed): relative to the repository, to the document's folder, to ``src/`` or
  to a package folder (``src/trace_app/``); a bare ``name.py`` must be a file somewhere
  under the repository. A path whose first folder exists nowhere (a path inside a
  package ZIP or a store, ``original/intake.json``) is not a repository path and is not
  checked; neither is one with a placeholder (``<id>``, ``{id}``, ``NNNN``, ``...``);
- a **Python name**: ``trace_app.domain.reviews.latest_review``, a module-relative one
  (``web.deps.render``, ``identity.may_be_alike``), a class member
  (``PackageStore.open``), and the ``from X import Y`` lines of Python code blocks. Names
  are found by reading the source (ast), never by importing it; a dotted code that is no
  Python name (an error code such as ``package.corrupt``, an audit action such as
  ``user.create``) passes when it is a string in the source;
- an **API route** (``POST /api/incidents/{id}/pfif?dry_run=true``, ``/api/me``): a route
  of ``src/trace_app/web/`` with that method (read from the routers' decorators; path
  parameters match whatever their names, the query is not checked);
- an **environment variable** ``TRACE_*`` or ``VIANO_*``: a string in the source;
- a **link** to a file (``[text](docs/trace.md#anchor)``): the file exists.

Deliberate exceptions (a historical name in an old decision record) are listed, each
with its reason, in ``tools/docs_allowlist.txt``. Run: ``python tools/check_docs.py``
(``make lint`` and ``make test`` run it).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGES = ("modelgate", "trace_app", "viano_bug_analysis")
ALLOWLIST = ROOT / "tools" / "docs_allowlist.txt"
FILE_SUFFIXES = (
    ".py", ".md", ".toml", ".txt", ".html", ".css", ".js", ".sh", ".jsonl", ".json", ".csv",
    ".xml", ".lock", ".cfg", ".ini", ".yml", ".yaml", ".gbnf", ".sql",
)  # fmt: skip
PLACEHOLDER = re.compile(r"[<>{}…]|\.\.\.|NNNN|\bXXXX\b")
INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
ENV_VAR = re.compile(r"(?:TRACE|VIANO)_[A-Z0-9_]+")
SHELL_LANGS = {"sh", "bash", "shell", "console", "zsh", ""}
SKIPPED_DIRS = {".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


@dataclass(frozen=True, slots=True)
class Problem:
    doc: str
    line: int
    span: str
    why: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: `{self.span}`: {self.why}"


# -- the repository's files and source -------------------------------------------------


@cache
def repo_files() -> tuple[str, ...]:
    """Every file under the repository (relative, POSIX), caches and the venv left out."""
    found: list[str] = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name not in SKIPPED_DIRS and not entry.name.endswith(".egg-info"):
                    stack.append(entry)
            else:
                found.append(entry.relative_to(ROOT).as_posix())
    return tuple(sorted(found))


@cache
def repo_dirs() -> frozenset[str]:
    dirs: set[str] = set()
    for name in repo_files():
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return frozenset(dirs)


@cache
def searchable_text() -> str:
    """The source, benchmarks, Makefile and pyproject, for literal look-ups."""
    chunks = []
    for name in repo_files():
        if name.startswith(("src/", "bench/")) and name.endswith((".py", ".toml", ".sh")):
            chunks.append((ROOT / name).read_text(encoding="utf-8", errors="replace"))
    for name in ("Makefile", "pyproject.toml"):
        chunks.append((ROOT / name).read_text(encoding="utf-8"))
    return "\n".join(chunks)


def is_string_in_source(text: str) -> bool:
    source = searchable_text()
    return f'"{text}"' in source or f"'{text}'" in source


# -- files ---------------------------------------------------------------------------


def path_roots(doc: Path) -> list[str]:
    """Folders a path in ``doc`` may be relative to ("" is the repository)."""
    roots = ["", doc.parent.relative_to(ROOT).as_posix(), "src"]
    roots += [f"src/{package}" for package in PACKAGES]
    roots += sorted(d for d in repo_dirs() if d.endswith("/templates"))  # template names
    return [r.strip("/") for r in roots]


def _exists(candidate: str) -> bool:
    candidate = candidate.rstrip("/")
    if any(ch in candidate for ch in "*?["):
        return any(fnmatch.fnmatchcase(name, candidate) for name in repo_files())
    return candidate in repo_dirs() or candidate in set(repo_files())


def check_path(span: str, doc: Path) -> str | None:
    """Why the path ``span`` does not exist, or None (also for a non-repository path)."""
    path = span.removeprefix("./")
    if "/" not in path.rstrip("/"):
        if not path.endswith(".py") or path.endswith("/"):
            return None  # a bare name that is not a module file: a member of a package
        if any(name.rsplit("/", 1)[-1] == path for name in repo_files()):
            return None
        return "no such file anywhere in the repository"
    roots = path_roots(doc)
    joined = ["/".join(p for p in (root, path) if p) for root in roots]
    if any(_exists(candidate) for candidate in joined):
        return None
    first = path.split("/", 1)[0]
    if not any("/".join(p for p in (root, first) if p) in repo_dirs() for root in roots):
        return None  # its first folder is no repository folder: a path in a ZIP or a store
    return "no such file or folder"


def check_name_in_file(path: str, name: str, doc: Path) -> str | None:
    """Why ``name`` is not defined in the module file ``path``, or None."""
    for root in path_roots(doc):
        candidate = "/".join(p for p in (root, path) if p)
        if candidate.startswith("src/") and candidate in set(repo_files()):
            module = candidate[4:-3].replace("/", ".").removesuffix(".__init__")
            return None if resolve(f"{module}.{name}") else f"{path} defines no {name}"
    return None


def looks_like_path(span: str) -> bool:
    if " " in span or "://" in span or span.startswith(("/", "../", "~")):
        return False
    if span.startswith((".trace-local", ".viano-local", ".venv", "$")):
        return False
    bare = span.rstrip("/").split("#", 1)[0]
    return (span.endswith("/") and "/" in span) or bare.endswith(FILE_SUFFIXES)


# -- Python names (read from the source, never imported) -----------------------------


@cache
def module_path(module: str) -> Path | None:
    """The file of a module of ours, or of an installed one (found without importing)."""
    parts = module.split(".")
    if parts[0] in PACKAGES:
        base = SRC.joinpath(*parts)
    else:
        try:
            spec = importlib.util.find_spec(parts[0])
        except (ImportError, ValueError):
            return None
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            return None
        top = Path(spec.origin)
        if len(parts) == 1:
            return top
        if top.name != "__init__.py":
            return None
        base = top.parent.joinpath(*parts[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if parts[0] not in PACKAGES and base.is_dir():
        return base  # a namespace package
    return None


@dataclass(slots=True)
class Scope:
    """The names a module or a class defines, and what its imports point at."""

    names: set[str] = field(default_factory=set)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    classes: dict[str, Scope] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)
    open_ended: bool = False  # star imports, a module __getattr__, an unknown base
    table: str = ""  # a SQLAlchemy model's __tablename__


def _targets(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _targets(element)


def _collect(body: list[ast.stmt], scope: Scope, module: str) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.names.add(node.name)
            if node.name == "__getattr__":
                scope.open_ended = True
        elif isinstance(node, ast.ClassDef):
            scope.names.add(node.name)
            inner = Scope(bases=[ast.unparse(base) for base in node.bases])
            _collect(node.body, inner, module)
            scope.classes[node.name] = inner
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                scope.names.update(_targets(target))
                if (
                    isinstance(target, ast.Name)
                    and target.id == "__tablename__"
                    and isinstance(node.value, ast.Constant)
                ):
                    scope.table = str(node.value.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            scope.names.update(_targets(node.target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                scope.names.add(local)
                scope.imports[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: -node.level]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                if alias.name == "*":
                    scope.open_ended = True
                    continue
                local = alias.asname or alias.name
                scope.names.add(local)
                scope.imports[local] = f"{base}.{alias.name}"
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                _collect(getattr(node, block, []), scope, module)
            for handler in getattr(node, "handlers", []):
                _collect(handler.body, scope, module)


@cache
def module_scope(module: str) -> Scope | None:
    path = module_path(module)
    if path is None:
        return None
    if path.is_dir():
        return Scope(open_ended=True)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return Scope(open_ended=True)
    scope = Scope()
    # a relative import counts its dots from the package: the package's own __init__
    # is one level below the package's name
    _collect(tree.body, scope, f"{module}.__init__" if path.name == "__init__.py" else module)
    return scope


def _class_has(cls: Scope, module: str, name: str, depth: int = 0) -> bool:
    if name in cls.names or cls.open_ended or depth > 5:
        return True
    for base in cls.bases:
        base_name = base.split("[", 1)[0]
        found = _lookup_class(module, base_name)
        if found is None:
            return True  # a base we cannot read (BaseModel, Enum, Exception): it may have it
        if _class_has(found[0], found[1], name, depth + 1):
            return True
    return False


def _lookup_class(module: str, dotted: str) -> tuple[Scope, str] | None:
    scope = module_scope(module)
    if scope is None:
        return None
    head, _, rest = dotted.partition(".")
    if head in scope.classes and not rest:
        return scope.classes[head], module
    target = scope.imports.get(head)
    if target is not None:
        full = f"{target}.{rest}" if rest else target
        owner, _, cls = full.rpartition(".")
        if module_scope(owner) is not None:
            return _lookup_class(owner, cls)
    return None


def resolve(dotted: str, depth: int = 0) -> bool | None:
    """True when ``dotted`` (a module, then attributes) exists; False when it surely does
    not; None when its first part is no module we can read."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module_path(module) is not None:
            return _resolve_in(module, parts[cut:], depth)
    return None


def _resolve_in(module: str, attributes: list[str], depth: int) -> bool:
    if not attributes:
        return True
    scope = module_scope(module)
    if scope is None or scope.open_ended:
        return True
    first, rest = attributes[0], attributes[1:]
    if first not in scope.names:
        return module_path(f"{module}.{first}") is not None and _resolve_in(
            f"{module}.{first}", rest, depth
        )
    if not rest:
        return True
    if first in scope.classes:
        cls = scope.classes[first]
        return _class_has(cls, module, rest[0]) if len(rest) == 1 else True
    target = scope.imports.get(first)
    if target is not None and depth < 5:
        found = resolve(".".join([target, *rest]), depth + 1)
        return True if found is None else found
    return True  # an attribute of a value: not followed


@cache
def our_modules() -> tuple[str, ...]:
    found = []
    for name in repo_files():
        if name.startswith("src/") and name.endswith(".py"):
            dotted = name[4:-3].replace("/", ".").removesuffix(".__init__")
            if dotted.split(".")[0] in PACKAGES:
                found.append(dotted)
    return tuple(found)


@cache
def our_classes() -> dict[str, list[tuple[Scope, str]]]:
    classes: dict[str, list[tuple[Scope, str]]] = {}
    for module in our_modules():
        scope = module_scope(module)
        for name, cls in (scope.classes if scope else {}).items():
            classes.setdefault(name, []).append((cls, module))
    return classes


def _member_of_a_class(head: str, member: str, modules: list[str]) -> bool:
    """Whether ``head.member`` reads as a member of an instance: of a class of the module
    ``head`` names (``replay.unplayed``), of a class named after it (``store.add``:
    ``PackageStore``), or a column of the table ``head`` (``alerts.joined_alert_id``)."""
    for module in modules:
        scope = module_scope(module)
        if scope and any(_class_has(cls, module, member) for cls in scope.classes.values()):
            return True
    for name, found in our_classes().items():
        for cls, _module in found:
            named_after = name.lower().endswith(head.lower())
            if (named_after or cls.table == head) and member in cls.names:
                return True
    return False


def check_python_name(span: str) -> str | None:
    """Why the dotted Python name ``span`` does not exist, or None (also when it is no
    Python name of ours)."""
    name = span.split("(", 1)[0].rstrip(".")
    if not DOTTED.fullmatch(name):
        return None
    parts = name.split(".")
    if parts[0] in PACKAGES:
        return None if resolve(name) else "no such module or name in the source"
    if parts[0] in sys.stdlib_module_names or parts[0] in {"trace", "viano"}:
        return None
    relative = [m for m in our_modules() if m.rsplit(".", 1)[-1] == parts[0]]
    if any(resolve(".".join([module, *parts[1:]])) for module in relative):
        return None
    if len(parts) == 2 and _member_of_a_class(parts[0], parts[1], relative):
        return None
    if is_string_in_source(name):
        return None  # a code or an action written as a string (package.corrupt)
    if relative:
        return f"no such name in {', '.join(relative)}"
    if parts[0] in our_classes():
        if any(_class_has(cls, module, parts[1]) for cls, module in our_classes()[parts[0]]):
            return None
        return f"class {parts[0]} has no {parts[1]!r}"
    if resolve(name) is False:
        return "no such module or name (read from its installed source)"
    return None


# -- commands -------------------------------------------------------------------------


@cache
def cli_commands() -> dict[str, Any]:
    """The click command trees of ``trace`` and ``viano``."""
    sys.path.insert(0, str(SRC))
    import typer.main

    from trace_app.cli import app as trace_app
    from viano_bug_analysis.cli import app as viano_app

    return {"trace": typer.main.get_command(trace_app), "viano": typer.main.get_command(viano_app)}


def _options(command: Any) -> dict[str, bool]:
    """An option's names -> whether it takes a value."""
    found = {"--help": False}
    for param in command.params:
        takes_value = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            if opt.startswith("-"):
                found[opt] = takes_value
    return found


@cache
def every_option() -> frozenset[str]:
    found: set[str] = set()
    stack = list(cli_commands().values())
    while stack:
        command = stack.pop()
        found.update(_options(command))
        stack.extend(getattr(command, "commands", {}).values())
    return frozenset(found)


@cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([A-Za-z][\w-]*):", text, re.MULTILINE))


def _words(command: str) -> list[str]:
    command = re.sub(r"\s#.*$", "", command)  # a trailing comment
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return [w.strip("[]") for w in words if w.strip("[]")]


def check_cli(program: str, words: list[str]) -> str | None:
    command = cli_commands()[program]
    path = program
    expecting_value = False
    for word in words:
        if expecting_value:
            expecting_value = False
            continue
        if word in {"|", "||", "&&", ";", ">", "<"}:
            break
        if word.startswith("-") and len(word) > 1 and not word[1:].isdigit():
            option = word.split("=", 1)[0]
            options = _options(command)
            if option not in options:
                return f"`{path}` has no option {option}"
            expecting_value = options[option] and "=" not in word
            continue
        subcommands = getattr(command, "commands", None)
        if subcommands:
            if PLACEHOLDER.search(word) or word.isupper():
                return None  # `viano import <format>`: any of them
            alternatives = word.split("|")
            missing = [a for a in alternatives if a not in subcommands]
            if missing:
                return f"`{path}` has no subcommand {missing[0]!r}"
            if len(alternatives) > 1:
                return None
            command = subcommands[word]
            path = f"{path} {word}"
    return None


def check_command(line: str) -> str | None:
    """Why a command line (``trace ...``, ``make ...``, ``python bench/x.py``) is wrong."""
    for part in re.split(r"\s\|\s|\s&&\s|;\s", line):
        words = _words(part.strip())
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # VAR=value before the command
        if not words:
            continue
        program = words[0].removeprefix(".venv/bin/")
        if program in {"trace", "viano"}:
            why = check_cli(program, words[1:])
        elif program == "make":
            targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
            unknown = [t for t in targets if t not in make_targets()]
            why = f"the Makefile has no target {unknown[0]!r}" if unknown else None
        elif program.startswith("python") and len(words) > 1 and words[1].endswith(".py"):
            script = ROOT / words[1]
            if not script.is_file():
                why = f"no such script {words[1]}"
            else:
                text = script.read_text(encoding="utf-8")
                unknown = [
                    w.split("=", 1)[0]
                    for w in words[2:]
                    if w.startswith("--") and f'"{w.split("=", 1)[0]}"' not in text
                ]
                why = f"{words[1]} has no option {unknown[0]}" if unknown else None
        else:
            why = None
        if why:
            return why
    return None


def is_command(span: str) -> bool:
    first = span.split(" ", 1)[0].removeprefix(".venv/bin/")
    if first in {"trace", "viano"}:
        return True
    if first == "make":
        return True
    return first.startswith("python") and " bench/" in span


# -- API routes -----------------------------------------------------------------------

HTTP_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")
ROUTE = re.compile(r"(?:(GET|POST|PUT|DELETE|PATCH) )?(/api/\S*)")
WEB = SRC / "trace_app" / "web"


def _normal_route(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path.split("?", 1)[0]).rstrip("/") or "/"


@cache
def web_routes() -> frozenset[tuple[str, str]]:
    """(METHOD, path) of every route the web package declares (``@router.post("/x")``;
    a router's ``prefix=`` is put before its paths), path parameters as ``{}``."""
    routes: set[tuple[str, str]] = set()
    prefixes: set[str] = {""}
    for path in sorted(WEB.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg == "prefix" and isinstance(keyword.value, ast.Constant):
                    prefixes.add(str(keyword.value.value))
            name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            first = node.args[0] if node.args else None
            if name.upper() in HTTP_METHODS and isinstance(first, ast.Constant):
                if isinstance(first.value, str) and first.value.startswith("/"):
                    routes.add((name.upper(), first.value))
    return frozenset(
        (method, _normal_route(prefix + path)) for method, path in routes for prefix in prefixes
    )


def check_route(span: str) -> str | None:
    found = ROUTE.fullmatch(span.strip())
    if found is None or PLACEHOLDER.search(found.group(2).split("?", 1)[0]):
        return None
    method, path = found.group(1), _normal_route(found.group(2))
    paths = {p for _m, p in web_routes()}
    if path not in paths:
        return "no such API route in src/trace_app/web/"
    if method and (method, path) not in web_routes():
        return f"the route answers no {method}"
    return None


# -- the documents -------------------------------------------------------------------


def documents() -> list[Path]:
    docs = sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "docs" / "decisions").glob("*.md"))
    return [ROOT / "README.md", *docs]


@cache
def allowlist() -> frozenset[tuple[str, str]]:
    """(document or "*", span) pairs to pass; see the file for each one's reason."""
    pairs = set()
    for raw in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        doc, span, _why = (part.strip() for part in line.split(" | ", 2))
        pairs.add((doc, span.strip("`")))
    return frozenset(pairs)


def check_span(span: str, doc: Path) -> str | None:
    span = span.strip()
    if not span:
        return None
    if is_command(span):
        return check_command(span)
    if span.startswith("-") and not span.startswith("---"):
        option = span.split()[0].split("=", 1)[0]
        if option in every_option() or is_string_in_source(option):
            return None
        if option in searchable_text():
            return None
        return "no `trace` or `viano` command has this option, and nothing passes it"
    if ROUTE.fullmatch(span):
        return check_route(span)
    env = ENV_VAR.fullmatch(span.split("=", 1)[0])
    if env:
        return None if env.group(0) in searchable_text() else "no code reads this variable"
    if ": " in span and looks_like_path(span.split(": ", 1)[0]):
        # "domain/person_view.py: current_status": the file, then a name in it
        path, name = span.split(": ", 1)
        return check_path(path, doc) or check_name_in_file(path, name.strip(), doc)
    if PLACEHOLDER.search(span):
        return None
    if looks_like_path(span):
        return check_path(span.split("#", 1)[0], doc)
    return check_python_name(span)


def scan(doc: Path) -> Iterator[tuple[int, str, str]]:
    """(line, span, kind) for every thing ``doc`` names: "code" for an inline code span,
    "shell" and "python" for a line of a code block, "link" for a link target."""
    fence: str | None = None
    lang = ""
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        opened = FENCE.match(line)
        if opened:
            if fence is None:
                fence, lang = opened.group(1), opened.group(2).lower()
                continue
            if opened.group(1).startswith(fence):
                fence = None
                continue
        if fence is not None:
            first = line.split(maxsplit=1)[0] if line.strip() else ""
            if not lang and "/" in first and looks_like_path(first):
                yield number, first, "code"  # a layout: `src/trace_app/   what it holds`
            elif lang in SHELL_LANGS:
                yield number, line.strip(), "shell"
            elif lang == "python":
                yield number, line.strip(), "python"
            continue
        for match in INLINE_CODE.finditer(line):
            yield number, match.group(1), "code"
        for match in LINK.finditer(line):
            yield number, match.group(1), "link"


def check_python_line(line: str) -> str | None:
    found = re.match(r"from\s+([\w.]+)\s+import\s+(.+)", line)
    if found:
        module = found.group(1)
        if module.split(".")[0] not in PACKAGES:
            return None
        if module_path(module) is None:
            return f"no module {module}"
        for name in found.group(2).strip("()").split(","):
            name = name.strip().split(" as ", 1)[0]
            if name and not resolve(f"{module}.{name}"):
                return f"{module} has no {name}"
        return None
    found = re.match(r"import\s+([\w.]+)", line)
    if found and found.group(1).split(".")[0] in PACKAGES and module_path(found.group(1)) is None:
        return f"no module {found.group(1)}"
    return None


def check_link(target: str, doc: Path) -> str | None:
    if re.match(r"[a-z]+:", target) or target.startswith("#"):
        return None
    path = target.split("#", 1)[0]
    resolved = (doc.parent / path).resolve()
    if not resolved.exists():
        return "the link's file does not exist"
    return None


def check(doc: Path) -> list[Problem]:
    name = doc.relative_to(ROOT).as_posix()
    problems: list[Problem] = []
    if (name, "*") in allowlist():
        return problems
    for number, span, kind in scan(doc):
        if (name, span) in allowlist() or ("*", span) in allowlist():
            continue
        if kind == "shell":
            line = span.removeprefix("$ ")
            why = check_command(line) if is_command(line) else None
        elif kind == "python":
            why = check_python_line(span)
        elif kind == "link":
            why = check_link(span, doc)
        else:
            why = check_span(span, doc)
        if why:
            problems.append(Problem(name, number, span, why))
    return problems


def main() -> int:
    problems = [problem for doc in documents() for problem in check(doc)]
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"{len(problems)} thing(s) the docs name do not exist. Fix the docs (or the code); "
            f"a deliberate exception goes in {ALLOWLIST.relative_to(ROOT)} with its reason."
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
