"""docs/internals.md's owner claims, checked over src/ with an AST scan.

- Every read of a file goes through nbagent.workspace.safe_read: a call of ``open()``, ``io.open``,
  ``Path.read_text``/``read_bytes`` or a read-only ``os.open`` elsewhere fails the test.
- Every temporary file of a write comes from nbagent.workspace.atomic (``atomic_write``, ``write_temp``,
  ``atomic_symlink``): ``temp_path``, ``tempfile.mkstemp``/``NamedTemporaryFile``/``TemporaryFile``,
  ``os.replace`` or ``os.rename`` elsewhere fails it. (Temporary *folders*, ``mkdtemp`` and
  ``TemporaryDirectory``, are scratch space, not a write's temporary file, and are not counted.)
- Escaping for display happens in render/: ``html.escape``, ``import html``, ``markupsafe`` or a function
  named like an escape (``*escape*``) elsewhere fails it.

Each place outside its owner that is allowed is listed below with why: a short list, to be kept short.
"""

from __future__ import annotations

import ast
from pathlib import Path
from tests.paths import CHECKOUT

SRC = CHECKOUT / "src"
DATA = ("nbagent/evals/suite/",)
"""The eval suite's tasks: data that nbagent never imports."""

READS_ALLOWED = {
    "nbagent/workspace/": "the owners themselves (safe_read, atomic, state_dir, trust, procs)",
    "nbagent/__init__.py": "the package's own pyproject.toml (a development checkout's version)",
    "nbagent/cli/batch.py": "the tasks file the user names on the command line",
    "nbagent/cli/sessions.py": "the export file the user names to `nbagent sessions import`",
    "nbagent/engine/attachments.py": "a file the user names to attach= (followed through a link, as the user asked)",
    "nbagent/evals/": "the eval suite's own files (tasks, checks, solutions, a check's result file)",
    "nbagent/jupyter/kernel/notebook_path.py": "Jupyter's runtime files (jpserver-*.json), not workspace content",
    "nbagent/mcp_server/serve.py": "the controlling terminal (/dev/tty) to ask on",
    "nbagent/model/local.py": "the log of the local model server nbagent started",
    "nbagent/store/db.py": "the template database nbagent just built in its own temporary folder",
    "nbagent/testing/": "the test harness's own scripted replies",
}
TEMPS_ALLOWED = {
    "nbagent/workspace/atomic.py": "the owner: the atomic write and its temporary files",
    "nbagent/workspace/tempfiles.py": "the owner of the temporary names and their sweep",
    "nbagent/model/local.py": "an anonymous log file for the local model server (never renamed into place)",
    "nbagent/knowledge/telemetry.py": "log rotation: a whole log renamed aside, no temporary file",
    "nbagent/evals/public/fetch.py": "a benchmark download streamed to a part file outside any workspace "
                                     "(landed with issue 34's merge; could move to a streaming write_temp)",
    "nbagent/batching/remote.py": "a finished clone folder renamed into the cache (a folder, not a write)",
}
ESCAPES_ALLOWED = {
    "nbagent/render/": "the owner",
}

TEMP_CALLS = {("tempfile", "mkstemp"), ("tempfile", "NamedTemporaryFile"), ("tempfile", "TemporaryFile"),
              ("os", "replace"), ("os", "rename")}


def findings(tree: ast.AST) -> list[tuple[str, int, str]]:
    """(claim, line, what) of every read, temporary file and escape in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += [(claim, node.lineno, what) for claim, what in _call(node)]
        elif isinstance(node, ast.Import) and any(a.name in ("html", "markupsafe") for a in node.names):
            found.append(("escape", node.lineno, "import html"))
        elif isinstance(node, ast.ImportFrom) and node.module in ("html", "markupsafe"):
            found.append(("escape", node.lineno, f"from {node.module} import"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "escape" in node.name.lower():
            found.append(("escape", node.lineno, f"def {node.name}"))
    return found


def _call(node: ast.Call) -> list[tuple[str, str]]:
    func = node.func
    if isinstance(func, ast.Name):
        if func.id == "open":
            return [("read", "open()")]
        return [("temp", "temp_path()")] if func.id == "temp_path" else []
    if not isinstance(func, ast.Attribute):
        return []
    owner = func.value.id if isinstance(func.value, ast.Name) else ""
    if func.attr in ("read_text", "read_bytes") and owner not in ("safe_read", "self"):
        return [("read", f".{func.attr}()")]
    if (owner, func.attr) == ("io", "open") or ((owner, func.attr) == ("os", "open") and _read_only(node)):
        return [("read", f"{owner}.open()")]
    if (owner, func.attr) in TEMP_CALLS or func.attr == "temp_path":
        return [("temp", f"{owner}.{func.attr}()")]
    if (owner, func.attr) == ("html", "escape"):
        return [("escape", "html.escape()")]
    return []


def _read_only(node: ast.Call) -> bool:
    """An ``os.open`` whose flags neither write nor create (O_RDONLY alone, or with O_NOFOLLOW...)."""
    flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
    return not any(word in flags for word in ("O_WRONLY", "O_RDWR", "O_CREAT"))


def _violations() -> list[str]:
    allowed = {"read": READS_ALLOWED, "temp": TEMPS_ALLOWED, "escape": ESCAPES_ALLOWED}
    out = []
    for path in sorted((SRC / "nbagent").rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(DATA):
            continue
        for claim, line, what in findings(ast.parse(path.read_text(encoding="utf-8"))):
            if not any(rel == place or (place.endswith("/") and rel.startswith(place)) for place in allowed[claim]):
                out.append(f"{rel}:{line}: {what} outside its owner ({claim})")
    return out


def test_reads_temporary_files_and_escapes_stay_with_their_owners():
    problems = _violations()
    assert not problems, "\n".join(problems)


def test_the_scan_sees_each_kind_of_breach():
    code = ("import html\n"
            "from pathlib import Path\n"
            "def f(p):\n"
            "    Path(p).read_text()\n"
            "    open(p).read()\n"
            "    os.open(p, os.O_RDONLY | os.O_NOFOLLOW)\n"
            "    os.open(p, os.O_WRONLY | os.O_CREAT)\n"  # a write: not a read
            "    tmp = temp_path(p)\n"
            "    os.replace(tmp, p)\n"
            "    tempfile.mkstemp()\n"
            "    tempfile.mkdtemp()\n"  # a scratch folder: not counted
            "    return html.escape(p)\n"
            "def my_escape(s):\n"
            "    return s\n")
    kinds = [(claim, what) for claim, _, what in findings(ast.parse(code))]
    assert sorted(kinds) == sorted([
        ("escape", "import html"), ("read", ".read_text()"), ("read", "open()"), ("read", "os.open()"),
        ("temp", "temp_path()"), ("temp", "os.replace()"), ("temp", "tempfile.mkstemp()"),
        ("escape", "html.escape()"), ("escape", "def my_escape"),
    ])


def test_the_allow_lists_name_places_that_exist():
    for places in (READS_ALLOWED, TEMPS_ALLOWED, ESCAPES_ALLOWED):
        for place in places:
            assert (SRC / place).exists(), place
