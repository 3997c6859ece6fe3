"""Glob patterns and directory trees over the workspace's ignore-aware walk."""

from __future__ import annotations

import os
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import re2

from ..errors import ToolError

# --- glob ----------------------------------------------------------------------
# Translated by hand because no stdlib matcher fits before Python 3.13's glob.translate:
# fnmatch's "*" crosses "/", PurePath.match has no "**", and pathspec's gitignore
# patterns also match everything under a matching directory. The regex runs on RE2,
# not on Python's backtracking engine: "*a*a*a*a*a*a*b" against a long name took
# seconds with ``re`` (and could not be interrupted); RE2 is linear in the name.

MAX_PATTERN = 1_000
MAX_ALTERNATIVES = 256
"""Brace expansion multiplies: ``{a,b}`` ten times is 1,024 patterns. Past this, the glob is refused."""


@lru_cache(maxsize=64)
def glob_regex(pattern: str) -> "re2._Regexp":
    """A regex for a path glob: ``*`` and ``?`` stay within a directory, ``**`` spans any
    number of them, ``[...]`` is a class and ``{a,b}`` an alternative. Dot files match too."""
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"the glob pattern is {len(pattern):,} characters; at most {MAX_PATTERN:,} are accepted")
    alternatives = [_translate(p) for p in _expand_braces(pattern.strip().lstrip("/"))]
    options = re2.Options()
    options.max_mem = 64 << 20
    try:
        return re2.compile("(?s:" + "|".join(alternatives) + r")\z", options)
    except re2.error as exc:
        raise ToolError(f"{pattern!r} is not a glob nbagent can match ({exc})") from None


def _translate(pattern: str) -> str:
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_translate_segment(part) + ("" if last else "/"))
    return "".join(out)


def _translate_segment(seg: str) -> str:
    out, i = [], 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := seg.find("]", i + 2)) > 0:
            body = seg[i + 1:end]
            body = "^" + body[1:] if body[0] in "!^" else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}")  # RE2's own escape
        i += 1
    return "".join(out)


def glob_match(pattern: str, path: str) -> bool:
    """Whether ``path`` matches the glob; a name that is not valid UTF-8 is matched with
    U+FFFD in place of its odd bytes (RE2 takes UTF-8 only)."""
    if not path.isascii():
        path = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return glob_regex(pattern).match(path) is not None


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c{d,e}}`` -> ``ab, acd, ace``; an unmatched brace is literal.

    Expanded one group at a time with a running count, so a pattern that would
    expand past MAX_ALTERNATIVES is refused before the work grows with it.
    """
    done: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        group = _first_group(current)
        if group is None:
            done.append(current)
        else:
            head, body, tail = group
            todo.extend(head + option + tail for option in reversed(_split_top_level(body)))
        if len(done) + len(todo) > MAX_ALTERNATIVES:
            raise ToolError(f"the glob's braces expand to more than {MAX_ALTERNATIVES} patterns; "
                            "use fewer alternatives or several calls")
    return done


def _first_group(pattern: str) -> tuple[str, str, str] | None:
    """(head, body, tail) around the first balanced top-level ``{...}``, or None."""
    depth, start = 0, -1
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                return pattern[:start], pattern[start + 1:i], pattern[i + 1:]
    return None


def _split_top_level(body: str) -> list[str]:
    parts, depth, current = [], 0, []
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (c == "{") - (c == "}")
        current.append(c)
    parts.append("".join(current))
    return parts


# --- list_dir ------------------------------------------------------------------

class Tree:
    """A walk's entries grouped by directory, with the file counts the tree's summaries use."""

    def __init__(self, entries: list[tuple[str, bool]], start: str):
        self.start = "" if start == "." else start
        self.children: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        self.files_below: dict[str, int] = defaultdict(int)
        self.dirs_below: dict[str, int] = defaultdict(int)
        for path, is_dir in entries:
            parent = path.rpartition("/")[0]
            self.children[parent].append((path, is_dir))
            for ancestor in _ancestors(parent, self.start):
                (self.dirs_below if is_dir else self.files_below)[ancestor] += 1

    def render(self, depth: int, max_lines: int) -> tuple[list[str], int, list[str]]:
        """(lines, entries not shown for the line cap, directories opened)."""
        lines: list[str] = []
        opened: list[str] = []
        hidden = 0

        def visit(directory: str, level: int) -> None:
            nonlocal hidden
            opened.append(directory)
            kids = sorted(self.children.get(directory, []), key=lambda e: (not e[1], e[0].lower()))
            for path, is_dir in kids:
                open_it = is_dir and level + 1 < depth
                if len(lines) >= max_lines:
                    hidden += 1 + (self.files_below[path] + self.dirs_below[path] if is_dir else 0)
                    continue
                lines.append("  " * level + self._label(path, is_dir, open_it))
                if open_it:
                    visit(path, level + 1)

        visit(self.start, 0)
        return lines, hidden, opened

    def _label(self, path: str, is_dir: bool, opened: bool) -> str:
        name = path.rpartition("/")[2]
        if not is_dir:
            return name
        if opened:
            return name + "/"
        files, dirs = self.files_below[path], self.dirs_below[path]
        inner = f"{files} file{'s' * (files != 1)}" + (f", {dirs} dir{'s' * (dirs != 1)}" if dirs else "")
        return f"{name}/ ({inner} below, not shown)"


def _ancestors(directory: str, start: str):
    """``directory`` and its parents down to (not including) ``start``."""
    while directory != start and directory:
        yield directory
        directory = directory.rpartition("/")[0]


def left_out(root: Path, tree: Tree, opened: list[str]) -> list[str]:
    """Names in the opened directories that the walk did not list (ignored, empty, links, .git)."""
    missing = []
    for directory in opened:
        listed = {p.rpartition("/")[2] for p, _ in tree.children.get(directory, [])}
        try:
            with os.scandir(root / directory if directory else root) as it:
                for entry in it:
                    if entry.name not in listed:
                        slash = "/" if entry.is_dir(follow_symlinks=False) else ""
                        missing.append(f"{directory}/{entry.name}{slash}" if directory else entry.name + slash)
        except OSError:
            continue
    return sorted(missing)
