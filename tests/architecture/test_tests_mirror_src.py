"""tests/ mirrors src/nbagent/: a test folder is named after the package or module it tests
(tests/jupyter/kernel for nbagent.jupyter.kernel, tests/tools/shell for nbagent/tools/shell.py), or is one of
the few cross-cutting folders below. Every test folder is a package (it has ``__init__.py``), so its modules
import as ``tests.<path>.<name>``: tests/mcp/conftest.py is ``tests.mcp.conftest``, never the ``mcp`` library,
and two folders may hold files of the same name."""

from __future__ import annotations

from pathlib import Path

from tests.paths import CHECKOUT, TESTS

SRC = CHECKOUT / "src" / "nbagent"

# Folders that test no one package: what a user meets across packages, or the tree itself.
CROSS_CUTTING = {
    "architecture": "the layers, owners, public surface and this layout, checked over the whole tree",
    "browser": "JupyterLab with the panel in headless Chromium: the front end, server and kernel at once",
    "install": "the built wheel and a Jupyter started as root, in scratch environments",
    "security": "hostile workspaces and model output across tools, state, rendering and the sandbox",
}
# Data the tests read, not tests: their Python files are task workspaces and checks, never collected.
DATA = {"fixtures", "evals/tasks", "evals/public/dabstep", "evals/public/dseval"}


def _is_data(relative: str) -> bool:
    return any(relative == d or relative.startswith(d + "/") for d in DATA)


def _test_folders() -> list[str]:
    """Every folder under tests/ that holds Python files, relative to tests/, data left out."""
    folders = set()
    for path in TESTS.rglob("*.py"):
        relative = path.parent.relative_to(TESTS).as_posix()
        if relative != "." and "__pycache__" not in relative and not _is_data(relative):
            folders.add(relative)
    return sorted(folders)


def _mirrors_src(relative: str) -> bool:
    target = SRC / relative
    return target.is_dir() or target.with_suffix(".py").is_file()


def test_every_test_folder_is_named_after_what_it_tests():
    stray = [f for f in _test_folders() if f.split("/")[0] not in CROSS_CUTTING and not _mirrors_src(f)]
    assert not stray, (f"tests/{stray[0]} matches no package or module of src/nbagent/: name it after what it "
                       f"tests, or add it to CROSS_CUTTING in {Path(__file__).name} with a reason")


def test_every_test_folder_is_a_package():
    bare = [f for f in _test_folders() if not (TESTS / f / "__init__.py").exists()]
    assert not bare, f"tests/{bare[0]} has no __init__.py (its modules would clash with same-named ones elsewhere)"


def test_the_cross_cutting_and_data_folders_exist():
    missing = [f for f in [*CROSS_CUTTING, *DATA] if not (TESTS / f).is_dir()]
    assert not missing, f"listed here but gone from tests/: {missing}"


def test_the_rule_catches_a_stray_folder():
    assert _mirrors_src("jupyter/kernel") and _mirrors_src("tools/shell") and _mirrors_src("store")
    assert not _mirrors_src("kernel") and not _mirrors_src("tools_shell") and not _mirrors_src("wire")


def test_the_files_scheduled_first_exist():
    """tests/conftest.py hands its LONGEST_FIRST files to the workers first: a file moved or renamed there
    would silently go back to the end of the queue."""
    from tests.conftest import LONGEST_FIRST

    missing = [path for path in LONGEST_FIRST if not (TESTS / path).is_file()]
    assert not missing, f"LONGEST_FIRST names files that are not under tests/: {missing}"
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
