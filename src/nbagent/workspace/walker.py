"""The ignore-aware file listing behind Workspace.walk: ripgrep when we have it, pathspec otherwise.

Both engines answer one question the same way: which files under a start
directory does git's view of the workspace show? The rules they share:

- every ``.gitignore`` from the *boundary* down applies, a deeper file
  overriding a shallower one, and the last matching line of a file winning;
  the boundary is the top of the git repository holding the workspace (so a
  workspace inside a repository gets that repository's rules, as git does),
  or the workspace root when there is no repository (``.gitignore`` files
  still apply, as ``rg --no-require-git`` does);
- a repository's ``.git/info/exclude`` applies under all of them;
- the user's global excludes file and ``.ignore``/``.rgignore`` files do not
  (git never reads the latter; the former would make results depend on who runs);
- an ignored directory is not entered, so nothing below it can come back;
- hidden files are listed; ``.git``, ``.nbagent``, collaboration's ``.jupyter/`` and
  ``.jupyter_ystore.db`` and Jupyter's ``.ipynb_checkpoints/`` never are;
- symbolic links are not followed and not listed (ripgrep's default), so
  the walk never leaves the workspace.

ripgrep is the engine because it is several times faster than any Python walk
(the bench holds us within 1.3x of ``rg --files``); pathspec's GitIgnoreSpec
is the fallback and the reference the tests hold ripgrep to. Its regexes run on RE2
(linear time): the ignore lines come from the workspace, which may be hostile.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

import re2
from pathspec import GitIgnoreSpec

from .safe_read import read_text
from .state_dir import STATE_DIR

JUPYTER_STATE = (
    # jupyter-collaboration writes these into the server root (docs/notebooks.md)
    ".jupyter", ".jupyter_ystore.db", ".jupyter_ystore.db-journal", ".jupyter_ystore.db-wal",
    # Jupyter's contents manager keeps its own copy of each saved notebook here
    ".ipynb_checkpoints")
ALWAYS_SKIPPED = (".git", STATE_DIR, *JUPYTER_STATE)
JUPYTER_SAVE_PREFIX = ".~"
"""jupyter_server's atomic save writes ``.~<name>`` beside a file for the moment it saves it: a checkpoint
taken then must not count it as a file the turn changed (a browser test caught ``.~work.ipynb``)."""


def is_jupyter_save_copy(path: str) -> bool:
    return os.path.basename(path).startswith(JUPYTER_SAVE_PREFIX)


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """The ``rg`` of the ripgrep wheel installed next to this Python, else one on PATH."""
    for bin_dir in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        found = shutil.which("rg", path=str(bin_dir))
        if found:
            return found
    return shutil.which("rg")


def git_top(root: Path) -> Path | None:
    """The nearest directory at or above ``root`` holding a ``.git`` (directory or file)."""
    for d in (root, *root.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def list_files(root: Path, start: str = ".", engine: str = "auto") -> list[str]:
    """Files under ``start`` (relative to ``root``) that the ignore rules keep, relative to ``root``."""
    rg = find_rg() if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise RuntimeError("ripgrep (rg) is not installed; pip install ripgrep")
    if start != "." and start_ignored(root, start):
        return []
    if rg is not None:
        return _rg_files(rg, root, start)
    return _pathspec_files(root, start)


# --- ripgrep ---------------------------------------------------------------

def rg_ignore_args(root: Path) -> list[str]:
    """The rg flags that apply our ignore rules; grep uses the same ones."""
    args = ["--no-config", "--hidden", "--no-ignore-global", "--no-ignore-dot"]
    for name in ALWAYS_SKIPPED:
        args += ["--glob", f"!{name}"]
    if git_top(root) is None:
        # No repository: .gitignore files still count, but only ours, not those
        # of the directories above the workspace (a home-directory .gitignore
        # holding "*" would otherwise hide everything).
        args += ["--no-require-git", "--no-ignore-parent"]
    return args


def _rg_files(rg: str, root: Path, start: str) -> list[str]:
    paths = [] if start == "." else [start]
    if start != "." and git_top(root) is None and _gitignores_above(root, start):
        # --no-ignore-parent, which keeps out the .gitignore files above a
        # workspace that is no repository, also drops those between the root
        # and a start below it: this one case needs the Python walker.
        return _pathspec_files(root, start)
    argv = [rg, "--files", "--null", *rg_ignore_args(root), "--", *paths]
    done = subprocess.run(argv, cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
    # Exit 2 means some entries could not be read; the rest of the listing is good.
    if done.returncode not in (0, 1, 2) or (done.returncode == 2 and not done.stdout):
        raise RuntimeError(f"rg --files failed: {done.stderr.decode(errors='replace').strip()}")
    text = done.stdout.decode("utf-8", "surrogateescape")
    files = text.split("\0")
    files.pop()  # the empty string after the last NUL
    return files


def _gitignores_above(root: Path, start: str) -> bool:
    parts = start.split("/")[:-1]
    return any((root.joinpath(*parts[:i]) / ".gitignore").is_file() for i in range(len(parts) + 1))


# --- pathspec ----------------------------------------------------------------

class _Rules:
    """The ignore files that apply in one directory, deepest first."""

    def __init__(self, chain: tuple[tuple[str, "_IgnoreFile"], ...] = ()):
        self.chain = chain  # (directory relative to the boundary, its ignore file), deepest first

    def entering(self, boundary: Path, rel_dir: str) -> "_Rules":
        rules = _read_spec(boundary / rel_dir / ".gitignore" if rel_dir else boundary / ".gitignore")
        return _Rules(((rel_dir, rules), *self.chain)) if rules else self

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        """The deepest ignore file with a verdict decides; within it the last line matching the path."""
        for base, rules in self.chain:
            sub = rel_path[len(base) + 1:] if base else rel_path
            verdict = rules.verdict(sub, is_dir)
            if verdict is not None:
                return verdict
        return False


class _Line:
    """One ignore line: pathspec's translation to a regex, run on RE2.

    The lines come from the workspace, which is hostile: on Python's backtracking engine a line
    of repeated ``*a`` against a long name never finishes (issue 26, finding 8). RE2 matches in
    time linear in the path, and pathspec's regexes are RE2 syntax (its own re2 backend uses them
    as they are); we keep per-line regexes because pathspec's set matchers give its check_file
    meaning, not git's (see ``_IgnoreFile.verdict``).
    """

    def __init__(self, include: bool, pattern: str):
        self.include = include
        options = re2.Options()
        options.max_mem = 8 << 20
        self.regex = re2.compile(pattern, options)
        self.dir_mark = self.regex.groupindex.get(_DIR_MARK)
        self.inside_only = pattern.endswith("/")  # "dir/**": everything inside dir, never dir itself

    def matches_itself(self, path: str, own_len: int) -> bool:
        match = self.regex.search(path)  # pathspec searches: an unanchored line ("*/") matches anywhere
        if match is None:
            return False
        if self.dir_mark is not None:
            # No directory mark, or the mark is this directory's own "/". An unanchored pattern ("*/")
            # first matches at the path's first "/" (a parent's): its later matches are looked at too.
            return any(m.start(self.dir_mark) in (-1, own_len) for m in self.regex.finditer(path))
        if self.inside_only:
            return match.end() < len(path)
        return True


_DIR_MARK = "ps_d"  # pathspec's group for the "/" after a directory the pattern matched


class _IgnoreFile:
    """The lines of one ``.gitignore`` (or ``info/exclude``) that say something."""

    def __init__(self, lines: list[_Line]):
        self.lines = lines

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included) or None, from the last line matching ``rel`` itself.

        GitIgnoreSpec.check_file also counts a line that matches one of the path's
        directories ("!.h" then re-includes ".h/x.tmp" after "*.tmp"); git and rg
        only look at the path itself, because an ignored directory is never
        entered. The walk never enters one either, so only the path's own match counts.
        """
        path = rel + "/" if is_dir else rel
        if not path.isascii():  # RE2 takes UTF-8 only: odd bytes become U+FFFD, one for one
            path = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        verdict = None
        for line in self.lines:
            if line.matches_itself(path, len(rel)):
                verdict = line.include
        return verdict


def _read_spec(path: Path) -> _IgnoreFile | None:
    try:
        lines = read_text(path).splitlines()  # a FIFO planted as a .gitignore is refused, not waited on
    except OSError:
        return None
    if not lines:
        return None
    compiled = []
    for pattern in GitIgnoreSpec.from_lines(map(_as_git_means, lines)).patterns:
        if pattern.include is None or pattern.regex is None:
            continue  # comments and blank lines
        try:
            compiled.append(_Line(pattern.include, pattern.regex.pattern))
        except re2.error:
            continue  # a line too large for RE2's memory budget is dropped, not matched slowly
    return _IgnoreFile(compiled) if compiled else None


def _as_git_means(line: str) -> str:
    """pathspec reads "dir/**/" as "dir/"; git (and rg) mean the directories inside dir."""
    stripped = line.rstrip()
    if stripped.endswith("/**/") and stripped.strip("/*") and not stripped.startswith("#"):
        return stripped + "*/"
    return line


def start_ignored(root: Path, start: str) -> bool:
    """Whether ``start`` (below the root) or a directory between them is ignored.

    rg lists an ignored directory it is handed explicitly; we keep git's view
    instead, so both engines list nothing there.
    """
    return _rules_down_to(root, start)[2]


def _rules_down_to(root: Path, start: str) -> tuple[Path, _Rules, bool, str]:
    """(boundary, rules in force inside ``start``, whether start is ignored, start relative to boundary)."""
    top = git_top(root)
    boundary = top or root
    rules = _Rules()
    if top is not None:
        exclude = _read_spec(top / ".git" / "info" / "exclude")
        rules = _Rules((("", exclude),)) if exclude else rules
    rel_start = (root if start == "." else root / start).relative_to(boundary).as_posix()
    rel_start = "" if rel_start == "." else rel_start
    parts = rel_start.split("/") if rel_start else []
    below_root = len(root.relative_to(boundary).parts)
    ignored = False
    for i in range(len(parts) + 1):
        here = "/".join(parts[:i])
        if i > below_root and rules.ignored(here, True):
            ignored = True
        rules = rules.entering(boundary, here)
    return boundary, rules, ignored, rel_start


def _pathspec_files(root: Path, start: str) -> list[str]:
    boundary, rules, ignored, rel_start = _rules_down_to(root, start)
    if ignored:
        return []
    out: list[str] = []
    prefix = "" if boundary == root else root.relative_to(boundary).as_posix() + "/"
    _scan(boundary, rel_start, rules, out)
    return [f[len(prefix):] for f in out] if prefix else out


def _scan(boundary: Path, rel_dir: str, rules: _Rules, out: list[str]) -> None:
    try:
        entries = list(os.scandir(boundary / rel_dir if rel_dir else boundary))
    except OSError:
        return  # unreadable directories are skipped, as rg skips them
    subdirs = []
    for entry in entries:
        if entry.name in ALWAYS_SKIPPED or entry.is_symlink():
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if not is_dir and not entry.is_file(follow_symlinks=False):
            continue  # sockets, fifos, devices
        if rules.ignored(rel, is_dir):
            continue
        if is_dir:
            subdirs.append(rel)
        else:
            out.append(rel)
    for rel in subdirs:
        _scan(boundary, rel, rules.entering(boundary, rel), out)
