"""Workspace.resolve / rel / state_dir: confinement to the root and the protected .nbagent/."""

from __future__ import annotations

import os

import pytest

from nbagent.errors import ToolError
from nbagent.workspace.root import Workspace


@pytest.fixture
def ws(root):
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a\n")
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "out_link").symlink_to(outside)
    (root / "in_link").symlink_to(root / "src")
    return Workspace(root)


def test_relative_and_absolute_inside_resolve_to_the_same_real_path(ws):
    assert ws.resolve("src/a.py") == ws.root / "src" / "a.py"
    assert ws.resolve(str(ws.root / "src" / "a.py")) == ws.root / "src" / "a.py"
    assert ws.resolve("") == ws.root
    assert ws.resolve("src/../src/./a.py") == ws.root / "src" / "a.py"
    assert ws.resolve("new/dir/file.txt") == ws.root / "new" / "dir" / "file.txt"


def test_dotdot_out_of_the_root_is_refused_naming_the_root(ws):
    with pytest.raises(ToolError) as err:
        ws.resolve("../outside/secret.txt")
    assert str(ws.root) in str(err.value) and "outside the workspace" in str(err.value)
    with pytest.raises(ToolError):
        ws.resolve("src/../../outside")
    with pytest.raises(ToolError):
        ws.resolve("does/not/../../../exist")


def test_absolute_path_elsewhere_is_refused(ws):
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve("/etc/passwd")
    with pytest.raises(ToolError):
        ws.resolve("~/anything")


def test_symlink_pointing_out_is_refused_and_says_so(ws):
    with pytest.raises(ToolError) as err:
        ws.resolve("out_link/secret.txt")
    assert "symbolic link" in str(err.value) and str(ws.root) in str(err.value)
    with pytest.raises(ToolError):
        ws.resolve("out_link/not-yet.txt", write=True)


def test_symlink_inside_resolves_to_its_target(ws):
    assert ws.resolve("in_link/a.py") == ws.root / "src" / "a.py"


def test_root_given_through_a_symlink_is_the_real_root(ws, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(ws.root)
    other = Workspace(alias)
    assert other.root == ws.root
    assert other.resolve(str(alias / "src" / "a.py")) == ws.root / "src" / "a.py"


def test_nbagent_is_readable_but_never_writable(ws):
    saved = ws.state_dir / "outputs" / "x.txt"
    saved.parent.mkdir()
    saved.write_text("whole output\n")
    assert ws.resolve(".nbagent/outputs/x.txt") == saved
    for path in (".nbagent/outputs/x.txt", ".nbagent", "src/../.nbagent/new", str(saved)):
        with pytest.raises(ToolError, match="never write"):
            ws.resolve(path, write=True)
    (ws.root / "state_link").symlink_to(ws.root / ".nbagent")
    with pytest.raises(ToolError, match="never write"):
        ws.resolve("state_link/db", write=True)


def test_nul_byte_is_refused(ws):
    with pytest.raises(ToolError, match="NUL"):
        ws.resolve("a\0b")


def test_rel(ws):
    assert ws.rel(ws.root / "src" / "a.py") == "src/a.py"
    assert ws.rel("src/a.py") == "src/a.py"
    assert ws.rel(ws.root) == "."
    with pytest.raises(ToolError):
        ws.rel("/etc")


def test_state_dir_is_created_on_first_use_with_a_gitignore(root):
    ws = Workspace(root)
    assert not (root / ".nbagent").exists()
    state = ws.state_dir
    assert state == root / ".nbagent" and state.is_dir()
    assert (state / ".gitignore").read_text() == "*\n"
    assert ws.state_dir == state  # a second use changes nothing


def test_workspace_must_be_a_directory(tmp_path):
    with pytest.raises(ToolError, match="not a directory"):
        Workspace(tmp_path / "missing")


def test_loop_of_symlinks_stays_inside(ws):
    os.symlink("loop_b", ws.root / "loop_a")
    os.symlink("loop_a", ws.root / "loop_b")
    resolved = ws.resolve("loop_a")
    assert resolved.is_relative_to(ws.root)
