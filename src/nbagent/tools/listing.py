"""Glob patterns and directory trees over the workspace's ignore-aware walk."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path


# --- glob ----------------------------------------------------------------------
# Written by hand because no stdlib matcher fits before Python 3.13's glob.translate:
# fnmatch's "*" crosses "/", PurePath.match has no "**", and pathspec's gitignore
# patterns also match everything under a matching directory.

@lru_cache(maxsize=64)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``*`` and ``?`` stay within a directory, ``**`` spans any
    number of them, ``[...]`` is a class and ``{a,b}`` an alternative. Dot files match too."""
    alternatives = [_translate(p) for p in _expand_braces(pattern.strip().lstrip("/"))]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z")


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
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c{d,e}}`` -> ``ab, acd, ace``; an unmatched brace is literal."""
    depth, start = 0, -1
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                head, body, tail = pattern[:start], pattern[start + 1:i], pattern[i + 1:]
                return [
                    expanded
                    for option in _split_top_level(body)
                    for expanded in _expand_braces(head + option + tail)
                ]
    return [pattern]


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
