"""The repo map: symbols by tree-sitter, notebooks included, import-graph order, ignore rules, mtime cache, budget."""

from __future__ import annotations

import pytest
import json
import os

from nbagent.knowledge.repomap import HEADER, RepoMap

pytestmark = pytest.mark.process


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project(root):
    write(root, "src/app/models.py", "class User:\n    def name(self, full: bool = False) -> str:\n        return ''\n"
                                     "    def _secret(self):\n        pass\n\ndef _helper():\n    pass\n")
    write(root, "src/app/api.py", "from app.models import User\nfrom . import util\n\ndef get(uid: int) -> User:\n"
                                  "    return User()\n")
    write(root, "src/app/util.py", "from .models import User\n\ndef fmt(x): return x\n")
    write(root, "src/app/__init__.py", "")
    write(root, "web/main.ts", "import { api } from './api';\nexport class Shell { start(port: number): void {} }\n"
                               "export function boot(): Shell { return new Shell(); }\n")
    write(root, "web/api.ts", "export function api(path: string): Promise<string> { return fetch(path).then(r => r.text()); }\n")
    nb = {"cells": [{"cell_type": "markdown", "source": "# def not_code(): pass"},
                    {"cell_type": "code", "source": ["%matplotlib inline\n", "from app.models import User\n",
                                                     "def plot_sales(df, region='EU'):\n", "    return df\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write(root, "analysis.ipynb", json.dumps(nb))
    write(root, ".gitignore", "build/\n")
    write(root, "build/generated.py", "def generated_symbol(): pass\n")


def test_symbols_order_notebooks_and_ignored_files(tmp_path):
    project(tmp_path)
    text = RepoMap(tmp_path).block()
    lines = text.splitlines()
    assert lines[0] == HEADER
    assert lines[1] == "src/app/models.py", "the most imported file comes first"
    assert "  class User" in lines and "    def name(self, full: bool = False) -> str" in lines
    assert "_secret" not in text and "_helper" not in text
    assert "  def plot_sales(df, region='EU')" in text and "not_code" not in text
    assert "  export class Shell" not in text and "  class Shell" in text and "    start(port: number): void" in text
    assert text.index("web/api.ts") < text.index("web/main.ts"), "imported by main.ts"
    assert "generated" not in text, "ignored files are skipped"


def test_the_cache_reparses_only_changed_files(tmp_path):
    project(tmp_path)
    first = RepoMap(tmp_path)
    text = first.block()
    assert first.last_stats["parsed"] == first.last_stats["files"] == 7
    warm = RepoMap(tmp_path)
    assert warm.block() == text and warm.last_stats["parsed"] == 0
    path = write(tmp_path, "src/app/util.py", "from .models import User\n\ndef fmt(x, width: int = 3): return x\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    again = RepoMap(tmp_path)
    assert "def fmt(x, width: int = 3)" in again.block() and again.last_stats["parsed"] == 1


def test_the_budget_caps_characters_and_files(tmp_path):
    for n in range(30):
        write(tmp_path, f"pkg/m{n:02d}.py", "".join(f"def function_number_{k}(argument_{k}): pass\n" for k in range(10)))
    text = RepoMap(tmp_path, budget=600, max_files=60).block()
    assert len(text) <= 600 + 40 and text.endswith("more files)")
    few = RepoMap(tmp_path, budget=100_000, max_files=5).block()
    assert sum(1 for line in few.splitlines() if line.startswith("pkg/")) == 5


def test_a_corrupt_cache_is_rebuilt(tmp_path):
    project(tmp_path)
    (tmp_path / ".nbagent").mkdir()
    (tmp_path / ".nbagent" / "repomap.json").write_text("{not json")
    assert "class User" in RepoMap(tmp_path).block()


def test_a_new_file_is_seen_by_the_next_build(tmp_path):
    project(tmp_path)
    assert "brand_new" not in RepoMap(tmp_path).block()
    write(tmp_path, "src/app/extra.py", "def brand_new(): pass\n")
    write(tmp_path, "src/app/later/deep.py", "def deeper(): pass\n")
    text = RepoMap(tmp_path).block()
    assert "def brand_new()" in text and "def deeper()" in text


def test_a_copy_of_the_same_files_is_not_parsed_again(tmp_path, monkeypatch):
    """A batch's tasks each map a fresh copy (new mtimes, own cache): files already analysed in this
    process are known by their content, so only changed content reaches the parser."""
    from nbagent.knowledge import repomap

    project(tmp_path / "a")
    project(tmp_path / "b")
    text = RepoMap(tmp_path / "a").block()
    parsed = []
    real = repomap._parser
    monkeypatch.setattr(repomap, "_parser", lambda language: parsed.append(language) or real(language))
    assert RepoMap(tmp_path / "b").block() == text and parsed == []
    write(tmp_path / "b", "src/app/util.py", "from .models import User\n\ndef fmt(x, pad: int = 1): return x\n")
    assert "def fmt(x, pad: int = 1)" in RepoMap(tmp_path / "b").block() and parsed == ["python"]


def test_a_transplanted_cache_gives_the_same_map_without_listing_or_reading(tmp_path, monkeypatch):
    """A batch seeds each copy with the map built over another copy of the same files: the copy's
    own times are taken, so its build only stats files (no file listing, no file read)."""
    from nbagent.knowledge import repomap

    project(tmp_path / "a")
    project(tmp_path / "b")
    built = RepoMap(tmp_path / "a")
    text = built.block()
    os.utime(tmp_path / "b" / "src" / "app" / "api.py", ns=(1, 1))  # other times than a's
    assert RepoMap(tmp_path / "b").transplant(built.cache_data())

    def no_listing(*args, **kwargs):
        raise AssertionError("the seeded map listed the files again")

    monkeypatch.setattr(repomap, "list_files", no_listing)
    monkeypatch.setattr(repomap, "analyse", lambda *a: (_ for _ in ()).throw(AssertionError("read a file")))
    seeded = RepoMap(tmp_path / "b")
    assert seeded.block() == text and seeded.last_stats["parsed"] == 0


def test_a_transplanted_cache_of_other_files_is_corrected_by_the_next_build(tmp_path):
    """The transplant does not look at the files: a file of another size is analysed again by the
    next build, and a file that is not there is left out of the map."""
    project(tmp_path / "a")
    project(tmp_path / "b")
    built = RepoMap(tmp_path / "a")
    assert "def plot_sales" in built.block()
    write(tmp_path / "b", "src/app/util.py", "from .models import User\n\ndef fmt(x, y): return x + y\n")
    (tmp_path / "b" / "analysis.ipynb").unlink()
    assert RepoMap(tmp_path / "b").transplant(built.cache_data())
    seeded = RepoMap(tmp_path / "b")
    text = seeded.block()
    assert "def fmt(x, y)" in text and "def fmt(x)" not in text and "plot_sales" not in text
    assert seeded.last_stats["parsed"] == 1
    assert not RepoMap(tmp_path / "b").transplant({"version": -1})  # not a map's cache: nothing taken
