"""The ignore-aware walk, its two engines (ripgrep, pathspec) agreeing, the @ picker's list and ranking."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .files_helpers import git_init, write
from nbagent.workspace.walker import find_rg, list_files
from nbagent.workspace.root import Workspace

ENGINES = ["rg", "pathspec"]

TREE = {
    ".gitignore": "build/\n*.log\n!keep.log\n/top-only.txt\ndocs/**/draft-*\n",
    "top-only.txt": "x",
    "src/top-only.txt": "kept: the rule is anchored to the root",
    "src/a.py": "a",
    "src/app.log": "ignored",
    "src/keep.log": "re-included",
    "src/.gitignore": "*.tmp\n!important.tmp\ngenerated/\n",
    "src/x.tmp": "ignored by src/.gitignore",
    "src/important.tmp": "re-included by src/.gitignore",
    "src/generated/out.py": "ignored dir",
    "src/deep/er/file.py": "deep",
    "src/deep/er/.gitignore": "!*.log\n",
    "src/deep/er/debug.log": "re-included by the deeper file",
    "build/lib/x.py": "ignored dir",
    "docs/guide/draft-1.md": "ignored by **",
    "docs/guide/final.md": "kept",
    ".hidden/config": "hidden files are listed",
    ".env": "listed too",
    ".nbagent/db": "never listed",
    "only_ignored/a.log": "dir holds nothing listed",
}

KEPT = {
    ".gitignore", "src/top-only.txt", "src/a.py", "src/keep.log", "src/.gitignore", "src/important.tmp",
    "src/deep/er/file.py", "src/deep/er/.gitignore", "src/deep/er/debug.log", "docs/guide/final.md",
    ".hidden/config", ".env",
}


@pytest.fixture
def tree(root):
    write(root, TREE)
    (root / "empty_dir").mkdir()
    (root / "link_to_src").symlink_to(root / "src")
    (root / "link_to_file").symlink_to(root / "src" / "a.py")
    return root


def files_of(ws: Workspace, start: str = ".") -> set[str]:
    return {p for p, is_dir in ws.walk(start) if not is_dir}


@pytest.mark.process
@pytest.mark.parametrize("engine", ENGINES)
def test_walk_follows_gitignore_rules_without_a_repository(tree, engine):
    assert files_of(Workspace(tree, engine=engine)) == KEPT


@pytest.mark.process
@pytest.mark.parametrize("engine", ENGINES)
def test_walk_in_a_repository_skips_git_and_reads_info_exclude(tree, engine):
    git_init(tree)
    (tree / ".git" / "info" / "exclude").write_text(".env\n")
    assert files_of(Workspace(tree, engine=engine)) == KEPT - {".env"}


@pytest.mark.parametrize("engine", ENGINES)
def test_walk_from_a_subdirectory_keeps_the_rules_above_it(tree, engine):
    ws = Workspace(tree, engine=engine)
    assert files_of(ws, "src") == {p for p in KEPT if p.startswith("src/")}
    assert files_of(ws, "src/deep") == {"src/deep/er/file.py", "src/deep/er/.gitignore", "src/deep/er/debug.log"}


@pytest.mark.parametrize("engine", ENGINES)
def test_an_ignored_start_lists_nothing(tree, engine):
    ws = Workspace(tree, engine=engine)
    assert files_of(ws, "build") == set()
    assert files_of(ws, "build/lib") == set()
    assert files_of(ws, "src/generated") == set()
    assert files_of(ws, ".nbagent") == set()


@pytest.mark.process
@pytest.mark.parametrize("engine", ENGINES)
def test_gitignore_above_a_workspace_that_is_no_repository_does_not_apply(tmp_path, engine):
    write(tmp_path, {".gitignore": "*\n", "ws/a.py": "a", "ws/sub/b.py": "b", "ws/sub/.gitignore": "c.py\n",
                     "ws/sub/c.py": "c"})
    ws = Workspace(tmp_path / "ws", engine=engine)
    assert files_of(ws) == {"a.py", "sub/b.py", "sub/.gitignore"}
    assert files_of(ws, "sub") == {"sub/b.py", "sub/.gitignore"}


@pytest.mark.process
@pytest.mark.parametrize("engine", ENGINES)
def test_a_workspace_inside_a_repository_gets_the_repository_rules(tmp_path, engine):
    git_init(tmp_path)
    write(tmp_path, {".gitignore": "*.log\nws/skipped/\n", "ws/a.py": "a", "ws/b.log": "b", "ws/skipped/c.py": "c"})
    ws = Workspace(tmp_path / "ws", engine=engine)
    assert files_of(ws) == {"a.py"}


@pytest.mark.process
def test_directories_come_before_their_contents_and_only_when_they_hold_files(tree):
    seen: set[str] = set()
    entries = list(Workspace(tree).walk())
    for path, is_dir in entries:
        parent = path.rpartition("/")[0]
        assert parent == "" or parent in seen, f"{path} came before its directory"
        if is_dir:
            seen.add(path)
    dirs = {p for p, d in entries if d}
    assert dirs == {"src", "src/deep", "src/deep/er", "docs", "docs/guide", ".hidden"}


@pytest.mark.process
def test_max_depth_counts_levels_below_the_start(tree):
    ws = Workspace(tree)
    assert set(ws.walk(max_depth=1)) == {
        (".gitignore", False), (".env", False), ("src", True), ("docs", True), (".hidden", True)
    }
    assert set(ws.walk("src/deep", max_depth=1)) == {("src/deep/er", True)}


def test_walk_of_a_file_yields_it(tree):
    assert list(Workspace(tree).walk("src/a.py")) == [("src/a.py", False)]


def test_rg_is_the_engine_when_installed():
    assert find_rg() is not None, "the ripgrep wheel should give us rg next to this Python"


# --- both engines agree on random trees and rules ---------------------------------

NAMES = st.sampled_from(["a", "b", "c.py", "d.log", ".h", "e.tmp"])
RULES = st.sampled_from([
    "*.log", "!d.log", "a/", "/a", "b", "**/c.py", "!c.py", "*.tmp", "!.h", ".h", "a/**/d.log", "b/*", "!b/e.tmp",
    "a/**", "!a/b", "!a/**/c.py", "*", "!*/", "b/**/", "/b/a", "e.tmp/",
])
EXAMPLES = int(os.environ.get("NBAGENT_WALK_EXAMPLES", "25"))


# derandomize: the same examples every run, so CI does not fail on a tree no one has seen; raise
# NBAGENT_WALK_EXAMPLES (and set NBAGENT_WALK_RANDOM=1) to explore new ones.
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          derandomize=not os.environ.get("NBAGENT_WALK_RANDOM"))
@given(
    paths=st.lists(st.lists(NAMES, min_size=1, max_size=4).map("/".join), min_size=1, max_size=15),
    rules=st.dictionaries(st.sampled_from(["", "a", "b", "a/b"]), st.lists(RULES, max_size=4), max_size=3),
    repo=st.booleans(),
)
@pytest.mark.process
def test_engines_agree_on_random_trees(tmp_path_factory, paths, rules, repo):
    root = tmp_path_factory.mktemp("agree")
    for rel in paths:
        target = root / rel
        if any(p.exists() and p.is_file() for p in target.parents if p != root and p.is_relative_to(root)):
            continue  # a file already holds this name
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(rel)
    for directory, lines in rules.items():
        gi = root / directory / ".gitignore"
        if gi.parent.is_dir():
            gi.write_text("\n".join(lines) + "\n")
    if repo:
        git_init(root)
    for start in [".", "a", "b", "a/b"]:
        if (root / start).is_dir():
            by_rg = sorted(list_files(root, start, "rg"))
            by_pathspec = sorted(list_files(root, start, "pathspec"))
            assert by_rg == by_pathspec, (start, rules)


@pytest.mark.parametrize("paths, rules", [
    (["b/a", "b/c/x"], ["b/**/"]),  # the directories inside b, not b itself
    (["a/a/a"], ["a/", "!*/"]),  # "!*/" re-includes every directory, a/a too (found by the random test)
    ([".h/e.tmp/a", ".h/k"], ["*.tmp", "!.h"]),  # re-including .h does not re-include what is inside
    (["a/b/c.py", "a/d.log", "a/b/keep.txt"], ["a/**", "!a/b", "!a/**/c.py"]),
])
@pytest.mark.process
@pytest.mark.parametrize("repo", [False, True])
def test_engines_agree_on_known_edge_cases(tmp_path, paths, rules, repo):
    write(tmp_path, {p: "x" for p in paths} | {".gitignore": "\n".join(rules) + "\n"})
    if repo:
        git_init(tmp_path)
    assert sorted(list_files(tmp_path, ".", "rg")) == sorted(list_files(tmp_path, ".", "pathspec"))


@pytest.mark.xfail(strict=True, reason="ripgrep, listing a directory below the root, matches the root .gitignore's "
                   "anchored negation '!a/b' against a/a/b; git (and the pathspec walker) keep a/a/b ignored by 'b'")
@pytest.mark.process
def test_a_start_below_the_root_with_an_anchored_negation_above(tmp_path):
    write(tmp_path, {"a/a/b": "x", ".gitignore": "b\n!a/b\n"})
    git_init(tmp_path)
    assert list_files(tmp_path, "a", "pathspec") == []
    assert list_files(tmp_path, "a", "rg") == []


# --- the @ picker --------------------------------------------------------------------

@pytest.fixture
def picker_tree(root):
    write(root, {
        "src/nbagent/tools/files.py": "", "src/nbagent/workspace.py": "", "tests/src_test.py": "",
        "docs/src/guide.md": "", "README.md": "", "srcmap.txt": "", "bench/search.py": "",
    })
    return Workspace(root)


@pytest.mark.process
def test_pick_ranks_a_path_prefix_first(picker_tree):
    found = picker_tree.pick("src/")
    assert found[:2] == ["src/nbagent/workspace.py", "src/nbagent/tools/files.py"]
    assert "docs/src/guide.md" in found and found.index("docs/src/guide.md") >= 2


@pytest.mark.process
def test_pick_orders_prefix_then_name_then_substring_then_loose(picker_tree):
    assert picker_tree.pick("src") == [
        "srcmap.txt", "src/nbagent/workspace.py", "src/nbagent/tools/files.py",  # path prefix, shorter first
        "tests/src_test.py",  # file name prefix
        "docs/src/guide.md",  # inside
        "bench/search.py",  # s, r, c in order
    ]
    assert picker_tree.pick("wsp") == ["src/nbagent/workspace.py"]  # letters in order
    assert picker_tree.pick("@README") == ["README.md"]
    assert picker_tree.pick("zzz") == []
    assert len(picker_tree.pick("", limit=3)) == 3


@pytest.mark.process
def test_files_are_walked_on_first_use_and_cached_until_refreshed(root):
    write(root, {"a.py": ""})
    ws = Workspace(root, files_ttl=3600)
    write(root, {"b.py": ""})  # the walk has not run yet: this file is seen
    assert ws.files() == ["a.py", "b.py"]
    write(root, {"c.py": ""})
    assert ws.files() == ["a.py", "b.py"]
    assert ws.files(refresh=True) == ["a.py", "b.py", "c.py"]
    write(root, {"d.py": ""})
    ws.invalidate()
    assert "d.py" in ws.files()


@pytest.mark.process
def test_files_refresh_after_the_ttl(root):
    ws = Workspace(root, files_ttl=0.05)
    assert ws.files() == []
    write(root, {"a.py": ""})
    time.sleep(0.1)
    assert ws.files() == ["a.py"]


@pytest.mark.process
@pytest.mark.parametrize("engine", ENGINES)
def test_collaboration_files_are_neither_listed_nor_picked(tree, engine):
    write(tree, {".jupyter_ystore.db": "sqlite", ".jupyter/collaboration_sessions.json": "{}",
                 "src/.jupyter/x.json": "{}"})
    ws = Workspace(tree, engine=engine)
    assert files_of(ws) == KEPT
    assert not [p for p in ws.pick("jupyter", 50) if ".jupyter" in p]
