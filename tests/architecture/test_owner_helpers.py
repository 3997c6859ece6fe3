"""The helpers the owners gained: first_of and escape_attribute (render/), write_temp, replace_with and
atomic_symlink (workspace.atomic), confined (workspace.root)."""

from __future__ import annotations

import os

import pytest

from nbagent.render.escape import escape_attribute, first_of
from nbagent.workspace.atomic import atomic_symlink, replace_with, write_temp
from nbagent.workspace.root import confined
from nbagent.workspace.tempfiles import SUFFIX


def test_first_of_lists_the_first_n_then_how_many_more():
    assert first_of(["a", "b"], 3) == "a, b"
    assert first_of(["a", "b", "c"], 3) == "a, b, c"
    assert first_of(["a", "b", "c", "d", "e"], 2) == "a, b … and 3 more"
    assert first_of(["x", "y", "z"], 1, sep="; ") == "x … and 2 more"


def test_an_attribute_value_holds_no_markup_and_shows_hidden_characters():
    assert escape_attribute("a' onmouseover='x\"<b>") == "a&#x27; onmouseover=&#x27;x&quot;&lt;b&gt;"
    assert escape_attribute("evil\u202etxt") == "evil&lt;U+202E&gt;txt"


def test_write_temp_then_replace_with_puts_the_bytes_in_place(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    tmp = write_temp(target, b"new", mode=0o640, fsync=False)
    assert tmp.parent == tmp_path and tmp.name.endswith(SUFFIX) and tmp.read_bytes() == b"new"
    replace_with(target, tmp)
    assert target.read_text() == "new" and not tmp.exists()
    assert os.stat(target).st_mode & 0o777 == 0o640 & ~_umask()


def test_write_temp_never_writes_through_a_link(tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    import nbagent.workspace.atomic as atomic

    planted = tmp_path / ".planted.nbagent-tmp"
    planted.symlink_to(victim)
    monkeypatch.setattr(atomic, "temp_path", lambda path: planted)  # a name an attacker guessed
    with pytest.raises(FileExistsError):
        write_temp(tmp_path / "f", b"x")
    assert victim.read_text() == "keep"


def test_atomic_symlink_replaces_a_file_with_a_link(tmp_path):
    path = tmp_path / "link"
    path.write_text("a file")
    atomic_symlink(path, "target.txt")
    assert os.readlink(path) == "target.txt"
    assert [p.name for p in tmp_path.iterdir()] == ["link"]


def test_confined_answers_none_outside_the_root(tmp_path):
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)
    assert confined(root, "sub") == root / "sub"
    assert confined(root, root / "sub" / "new.txt") == root / "sub" / "new.txt"
    assert confined(root, "../elsewhere") is None
    assert confined(root, "out/x") is None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
