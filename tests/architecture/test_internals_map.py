"""docs/internals.md is true and kept true: its generated sections are never stale, and the page names
only what exists (every module, class, function, event and file it mentions).

The hand-written contracts went stale before (events missing from the list, an option renamed, a
constant no module exported): the last tests read the page's code spans and dotted names and fail on
each one that names nothing in the source.
"""

from __future__ import annotations

import pytest
import ast
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from tests.paths import CHECKOUT

ROOT = CHECKOUT


@pytest.mark.process
def test_the_module_map_is_up_to_date_and_every_module_has_a_docstring():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_internals.py"), "--check"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_the_map_names_every_module_with_its_purpose():
    page = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    assert "| `nbagent.render.terminal` | The shared text renderer of the CLI" in page
    assert ("| `nbagent.events` | **public** (docs/python-api.md): The one typed event stream that every front end "
            "renders. |") in page  # a public module is marked; an internal one is not
    assert "| `nbagent.engine.agent` | The Agent: the one object every front end drives. |" in page
    suite = ROOT / "src" / "nbagent" / "evals" / "suite"  # data: the eval tasks' own Python files
    modules = sorted(p for p in (ROOT / "src" / "nbagent").rglob("*.py") if not p.is_relative_to(suite))
    assert all(f"`{_dotted(path)}`" in page for path in modules)


def test_the_generated_sections_list_every_event_status_and_tool_set():
    """What the hand-written lists had left out (issue 25): they are generated now."""
    page = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    for event in ("memory_injected", "session_changed", "settings_changed"):
        assert f"| `{event}` |" in page
    assert "- `ToolStatus`: done, failed, denied, killed, interrupted" in page
    for toolset in ("context", "read", "core", "kernel"):
        assert f"| `{toolset}` |" in page
    assert "`kernel_run` (always_ask)" in page and "TOOLSET" not in page


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# ----- every name on the page exists ------------------------------------------------------------

SRC = ROOT / "src"
PAGE = ROOT / "docs" / "internals.md"

EXTERNAL = {"Path", "Any", "asyncio", "os", "json", "sqlite3", "concurrent", "typing", "dict", "list", "str",
            "int", "bool", "float", "None", "True", "False"}
"""Names of Python itself the page uses in signatures; everything else must be nbagent's."""


@pytest.fixture(autouse=True, scope="module")
def _forget_the_syntax_trees_afterwards():
    """Every module's syntax tree, kept for the rest of the run, is hundreds of thousands of objects
    that each full garbage collection of the pytest worker walks again (seconds over a run)."""
    yield
    for cached in (_trees, _universe, _parameters):
        cached.cache_clear()


@lru_cache(maxsize=None)
def _trees() -> dict[str, ast.Module]:
    """Module name -> its syntax tree: nbagent's modules, and gen_internals (the page names its tables)."""
    found = {"scripts.gen_internals": ast.parse((ROOT / "scripts" / "gen_internals.py").read_text("utf-8"))}
    for path in sorted((SRC / "nbagent").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = ast.parse(path.read_text("utf-8"))
    return found


@lru_cache(maxsize=None)
def _universe() -> dict[str, set[str]]:
    """Every name nbagent's source defines or uses, by kind."""
    kinds: dict[str, set[str]] = {k: set() for k in ("def", "class", "assign", "other")}
    for tree in _trees().values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kinds["def"].add(node.name)
            elif isinstance(node, ast.ClassDef):
                kinds["class"].add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                kinds["assign"].add(node.id)
            elif isinstance(node, ast.alias):
                kinds["assign"].add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.Attribute):
                kinds["other"].add(node.attr)
            elif isinstance(node, ast.arg):
                kinds["other"].add(node.arg)
            elif isinstance(node, ast.keyword) and node.arg:
                kinds["other"].add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                kinds["other"].update(re.findall(r"[A-Za-z_][\w-]*", node.value))
    return kinds


def _top_names(module: str) -> set[str]:
    """What ``module`` defines or imports at its top level (and each class's members, as Class.member)."""
    names: set[str] = set()
    for node in _trees()[module].body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            names.update(f"{node.name}.{n.name}" for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
            names.update(f"{node.name}.{n.target.id}" for n in node.body
                         if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(getattr(t, "id", "") == "__all__" for t in targets) and node.value is not None:
                names.update(ast.literal_eval(node.value))  # a package's lazy names (its __getattr__)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def dotted_exists(name: str) -> bool:
    """``nbagent.x.y[.Attr[.member]]``: a module, or a name that module defines."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in _trees():
            rest = parts[cut:]
            if not rest:
                return True
            members = _top_names(module)
            return ".".join(rest[:2]) in members or (len(rest) == 1 and rest[0] in members) or (
                rest[0] in members and rest[0] in _trees_submodules(module))
    return False


def _trees_submodules(module: str) -> set[str]:
    return {m.rpartition(".")[2] for m in _trees() if m.rpartition(".")[0] == module}


def _events() -> dict[str, set[str]]:
    """Event type -> its field names, from nbagent/events.py."""
    found = {}
    for node in _trees()["nbagent.events"].body:
        if isinstance(node, ast.ClassDef) and any(getattr(d, "id", "") == "_event" for d in node.decorator_list):
            annotated = {n.target.id: n.annotation for n in node.body if isinstance(n, ast.AnnAssign)
                         and isinstance(n.target, ast.Name)}
            type_name = ast.literal_eval(annotated["type"].slice)  # type: ignore[attr-defined]
            found[type_name] = set(annotated) | {"turn_id"}  # ``type: Literal["text_delta"]``
    return found


CHAIN = re.compile(r"^\.?([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*)*)(\(|$|\s*->|:\s|\s*=)")


def problems_of(span: str) -> list[str]:
    """What ``span`` (a code span of the page) names that does not exist."""
    if span.startswith(("nbagent ", "%", "git ", "import ", "if ", "/", "<", ".nbagent", "mcp:")):
        return []  # commands, routes, runtime paths and Python syntax
    if re.fullmatch(r"(src/)?nbagent/[\w/.]*|(scripts|tests|docs|labextension)/[\w/.]*", span):
        path = ROOT / span if (ROOT / span).exists() else SRC / span
        return [] if path.exists() else [f"no file {span}"]
    if span.startswith("nbagent."):
        name = re.match(r"[\w.]+", span).group().rstrip(".")  # type: ignore[union-attr]
        return [] if dotted_exists(name) else [f"no module or name {name}"]
    match = CHAIN.match(span)
    if not match:
        return []
    first, rest, after = match.group(1), match.group(2).lstrip("."), match.group(3)
    kinds = _universe()
    events = _events()
    if first in EXTERNAL:
        return []
    if first in events:
        field = rest.split(".")[0]
        return [] if not field or field in events[first] else [f"event {first} has no field {field}"]
    if first[0].isupper():
        known = kinds["class"] | kinds["assign"] | kinds["def"]
        return [] if first in known else [f"no class or name {first}"]
    if after == "(" and not rest:
        if first not in kinds["def"] | kinds["class"]:
            return [f"no function {first}"]
        return [f"{first}() has no parameter {k}" for k in _keywords(span) if k not in _parameters()[first]]
    if after == "(" and rest:
        method = rest.split(".")[-1]
        return [] if method in kinds["def"] else [f"no method {method} (in {span!r})"]
    everything = set().union(*kinds.values())
    missing = [n for n in [first, *filter(None, rest.split("."))] if n not in everything]
    return [f"{n!r} is no name in nbagent (in {span!r})" for n in missing]


@lru_cache(maxsize=None)
def _parameters() -> dict[str, set[str]]:
    """Function name -> the parameter names of every def of that name."""
    found: dict[str, set[str]] = {}
    for tree in _trees().values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                found.setdefault(node.name, set()).update(
                    a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
    return found


def _keywords(span: str) -> list[str]:
    """The keyword arguments of a call written in ``span`` ("f(x, a=1) -> T"), if it parses as one."""
    try:
        call = ast.parse(span.split(" -> ")[0].replace("...", "x"), mode="eval").body
    except SyntaxError:
        return []
    return [k.arg for k in call.keywords if k.arg] if isinstance(call, ast.Call) else []


def test_every_name_on_the_page_exists():
    page = PAGE.read_text(encoding="utf-8")
    spans = set(re.findall(r"`([^`\n]+)`", page))
    dotted = set(re.findall(r"(?<![\w/.])nbagent(?:\.[A-Za-z_]\w*)+", page))
    paths = set(re.findall(r"(?<![\w/.])(?:src/)?nbagent/[\w/]+\.py\b", page))
    problems = sorted({p for span in spans | dotted | paths for p in problems_of(span)})
    assert not problems, "docs/internals.md names what does not exist:\n" + "\n".join(problems)


def test_the_check_catches_a_stale_name():
    assert problems_of("nbagent.tools.files.TOOLSET") and problems_of("nbagent.statedir_gone")
    assert problems_of("memory_recalled") and problems_of("tool_result.outcome")
    assert problems_of("function_tool_v2(fn)") and problems_of("ToolContextual")
    assert problems_of("nbagent/tools/gone.py") and problems_of("TOOLSET = ToolSet(...)")
    assert problems_of("function_tool(fn, approve_always=True)")
    assert not problems_of("nbagent.tools.base.function_tool") and not problems_of("tool_result.status")
    assert problems_of("nbagent.journal") and not problems_of("nbagent.checkpoints.journal")  # no old paths
    assert not problems_of("memory_injected")
