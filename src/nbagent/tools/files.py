"""File tools: read, write and edit files, find them by glob, list directories.

Every path goes through ``ctx.workspace.resolve``: nothing outside the
workspace is read or written, and nothing under .nbagent/ is written. Writes
are atomic (a temporary file, then os.replace) and keep the file's mode; the
three writing tools return the unified diff of what they changed, and their
``preview`` computes the same diff without writing, for approval cards.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ..errors import ToolError
from ..render.escape import first_of
from .base import ToolSet, function_tool
from .context import ToolContext
from .edits import Edit, apply_edits
from ..workspace.atomic import atomic_write
from .listing import Tree, glob_match, glob_regex, left_out
from .textfile import binary_message, read_regular_bytes, read_text, read_window, text_window, unified_diff

DEFAULT_READ_LINES = 2000
MAX_MANY_FILES = 20
GLOB_MAX_RESULTS = 500
LIST_MAX_LINES = 400
_NOTE_ROOM = 300  # characters kept free for read_file's closing note


def _char_budget(ctx: ToolContext) -> int:
    """read_file stays under the output limit itself, so its own paging note is never cut away."""
    return max(ctx.config.output_limit - _NOTE_ROOM, 1000)


def _missing(ctx: ToolContext, path: str, advice: str = "") -> ToolError:
    """A "does not exist" error naming files with a similar name (the @ picker's ranking)."""
    name = Path(path).name
    similar = ctx.workspace.pick(name, limit=3) or ctx.workspace.pick(Path(name).stem, limit=3) if name else []
    hint = f"; similar files: {', '.join(similar)}" if similar else ""
    return ToolError(f"{path} does not exist in the workspace {ctx.workspace.root}{hint}{advice}")


IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp"}
IMAGE_MAX_BYTES = 64 * 1024 * 1024
EDITOR_TEXT = "editor_text"
"""``ctx.extras[EDITOR_TEXT]``: a callable giving a file's text as the user's editor holds it, unsaved changes
included (None: read the file), set by a front end whose client offers it (``nbagent acp``: fs/read_text_file)."""
EDITOR_WRITE = "editor_write"
"""``ctx.extras[EDITOR_WRITE]``: a callable ``(path, text) -> bool`` handing a write to the user's editor, so its
buffer gets the edit (``nbagent acp``: fs/write_text_file); the file on disk is then checked, and written
here when the editor did not save it, so checkpoints and the next reads see the same text."""


def _read_one(ctx: ToolContext, path: str, offset: int, limit: int, budget: int) -> str:
    real = ctx.workspace.resolve(path)
    if not real.exists():
        raise _missing(ctx, path)
    mime = IMAGE_SUFFIXES.get(real.suffix.lower())
    editor = ctx.extras.get(EDITOR_TEXT) if mime is None else None  # an image is read from the file, not an editor's text
    text = editor(real) if editor is not None and real.is_file() else None
    if text is not None:
        return text_window(text, ctx.workspace.rel(real), offset, limit, budget)
    try:
        if mime is not None and real.is_file():
            return _read_image(ctx, real, mime)
        return read_window(real, ctx.workspace.rel(real), offset, limit, budget)
    except OSError as exc:
        raise ToolError(f"{path} cannot be read: {exc.strerror or exc}") from None


def _read_image(ctx: ToolContext, real, mime: str) -> str:
    """An image file: its caption, and the image for a model that can see (nbagent.images)."""
    shown = ctx.workspace.rel(real)
    data, _ = read_regular_bytes(real, shown, IMAGE_MAX_BYTES)
    sink = ctx.image_sink()
    kept = len(sink.images)
    line = sink.add_bytes(data, mime, shown)
    if len(sink.images) == kept and "not attached" not in line:  # not an image it can read: as any binary file
        raise ToolError(f"{binary_message(shown, real)}; {line.strip('[]')}")
    return line


# --- core ----------------------------------------------------------------------

def read_file(
    ctx: ToolContext,
    path: str,
    offset: Annotated[int, Field(ge=1)] = 1,
    limit: Annotated[int, Field(ge=1)] = DEFAULT_READ_LINES,
) -> str:
    """Read a text file as numbered lines (like cat -n), a window at a time.

    Args:
        path: File path.
        offset: Line number to start at (1 is the first line).
        limit: Most lines to show.
    """
    return _read_one(ctx, path, offset, limit, _char_budget(ctx))


def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create a file or replace its whole content; parent directories are created.

    Args:
        path: File path.
        content: The complete new content of the file.
    """
    real, shown, before = _before_write(ctx, path)
    if before == content:
        return f"No change: {shown} already has this content"
    created = _write(ctx, real, shown, content)
    verb = "Created" if created else "Wrote"
    return f"{verb} {shown} ({_count(content)})\n" + unified_diff(shown, before, content)


def preview_write_file(ctx: ToolContext, path: str, content: str) -> str:
    _, shown, before = _before_write(ctx, path)
    return unified_diff(shown, before, content)


def edit_file(ctx: ToolContext, path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
    """Replace exact text in a file. old_string must occur exactly once unless replace_all is true.

    Quote old_string exactly as the file has it (indentation included), with enough
    surrounding lines to make it unique.

    Args:
        path: File path.
        old_string: The exact text to replace.
        new_string: The text to put in its place.
        replace_all: Replace every occurrence instead of requiring exactly one.
    """
    edit = Edit(old_string=old_string, new_string=new_string, replace_all=replace_all)
    return _edit(ctx, path, [edit])


def preview_edit_file(
    ctx: ToolContext, path: str, old_string: str, new_string: str, replace_all: bool = False
) -> str:
    edit = Edit(old_string=old_string, new_string=new_string, replace_all=replace_all)
    real, shown, before, after, _ = _plan_edits(ctx, path, [edit])
    return unified_diff(shown, before, after)


def glob(ctx: ToolContext, pattern: str, path: str = ".") -> str:
    """Find files by name pattern, e.g. "src/**/test_*.py" or "*.{md,txt}".

    "*" stays within one directory and "**" spans any number; a pattern without "**"
    only matches at its own level. Files ignored by .gitignore are left out.
    Returns the paths, sorted.

    Args:
        pattern: Glob pattern, relative to path.
        path: Directory to search from.
    """
    real = ctx.workspace.resolve(path)
    if not real.is_dir():
        raise (_missing(ctx, path) if not real.exists() else ToolError(f"{path} is a file, not a directory"))
    base = ctx.workspace.rel(real)
    strip = 0 if base == "." else len(base) + 1
    glob_regex(pattern)  # a pattern that cannot work is refused before the walk
    found = [p for p, is_dir in ctx.workspace.walk(base) if not is_dir and glob_match(pattern, p[strip:])]
    if not found:
        return _no_glob_match(ctx, pattern, base)
    found.sort()
    shown = found[:GLOB_MAX_RESULTS]
    more = len(found) - len(shown)
    tail = f"\n[{len(shown)} of {len(found)} matches shown; narrow the pattern or the path]" if more else ""
    return "\n".join(shown) + tail


def _no_glob_match(ctx: ToolContext, pattern: str, base: str) -> str:
    where = "the workspace" if base == "." else base
    message = f"No files match {pattern} in {where} (files ignored by .gitignore are left out)"
    if "**" not in pattern and "/" not in pattern:
        message += f"; the pattern matches only at the top level: try **/{pattern}"
    return message


# --- edit-plus -------------------------------------------------------------------

async def read_many_files(
    ctx: ToolContext,
    paths: Annotated[list[str], Field(min_length=1, max_length=MAX_MANY_FILES)],
    offset: Annotated[int, Field(ge=1)] = 1,
    limit: Annotated[int, Field(ge=1)] = DEFAULT_READ_LINES,
) -> str:
    """Read up to 20 files at once, each as numbered lines from the same window.

    Args:
        paths: File paths.
        offset: Line number to start at in each file.
        limit: Most lines to show of each file.
    """
    budget = max(_char_budget(ctx) // len(paths) - 100, 500)

    async def one(path: str) -> str:
        try:
            body = await asyncio.to_thread(_read_one, ctx, path, offset, limit, budget)
        except ToolError as exc:
            body = f"error: {exc}"
        return f"==> {path} <==\n{body}"

    blocks = await asyncio.gather(*(one(p) for p in paths))
    return "\n\n".join(blocks)


def multi_edit(ctx: ToolContext, path: str, edits: Annotated[list[Edit], Field(min_length=1)]) -> str:
    """Make several replacements in one file, in order, all or nothing (if one fails, the file is untouched).

    Args:
        path: File path.
        edits: The replacements, in order.
    """
    return _edit(ctx, path, edits)


def preview_multi_edit(ctx: ToolContext, path: str, edits: list[Edit]) -> str:
    _, shown, before, after, _ = _plan_edits(ctx, path, edits)
    return unified_diff(shown, before, after)


def list_dir(ctx: ToolContext, path: str = ".", depth: Annotated[int, Field(ge=1, le=10)] = 2) -> str:
    """Show a directory as a tree, a few levels deep, leaving out what .gitignore ignores.

    Args:
        path: Directory.
        depth: Levels to show (1 = only the directory's own entries).
    """
    real = ctx.workspace.resolve(path)
    if not real.is_dir():
        raise (_missing(ctx, path) if not real.exists() else ToolError(f"{path} is a file: use read_file"))
    base = ctx.workspace.rel(real)
    entries = list(ctx.workspace.walk(base))
    if not entries and base != ".":
        return (
            f"{base}/ shows nothing: it is ignored by .gitignore, empty, or holds only ignored files "
            f"(bash `ls {base}` shows it anyway; grep with path={base} searches it)"
        )
    tree = Tree(entries, base)
    lines, hidden, opened = tree.render(depth, LIST_MAX_LINES)
    header = "./" if base == "." else base + "/"
    notes = []
    if hidden:
        notes.append(f"[{hidden} more entries not shown: list a subdirectory or use a smaller depth]")
    missing = left_out(ctx.workspace.root, tree, opened)
    if missing:
        names = first_of(missing, 8)
        notes.append(f"[left out: {len(missing)} ignored, empty or linked ({names})]")
    return "\n".join([header, *("  " + line for line in lines), *notes])


# --- shared write path -------------------------------------------------------------

def _before_write(ctx: ToolContext, path: str) -> tuple[Path, str, str | None]:
    real = ctx.workspace.resolve(path, write=True)
    shown = ctx.workspace.rel(real)
    if real.is_dir():
        raise ToolError(f"{shown} is a directory: give a file path")
    before = read_text(real, shown) if real.exists() else None
    return real, shown, before


def _plan_edits(ctx: ToolContext, path: str, edits: list[Any]) -> tuple[Path, str, str, str, int]:
    real = ctx.workspace.resolve(path, write=True)
    shown = ctx.workspace.rel(real)
    if not real.exists():
        raise _missing(ctx, path, "; write_file creates a new file")
    before = read_text(real, shown)
    after, count = apply_edits(before, edits)
    return real, shown, before, after, count


def _edit(ctx: ToolContext, path: str, edits: list[Any]) -> str:
    real, shown, before, after, count = _plan_edits(ctx, path, edits)
    if after == before:
        return f"No change: the edits leave {shown} as it was"
    _write(ctx, real, shown, after)
    what = f"{count} replacement{'s' * (count != 1)}"
    return f"Edited {shown} ({what})\n" + unified_diff(shown, before, after)


def _write(ctx: ToolContext, real: Path, shown: str, text: str) -> bool:
    editor = ctx.extras.get(EDITOR_WRITE)
    try:
        if editor is not None:
            existed = real.exists()
            if editor(real, text) and _holds(real, text):
                if not existed:
                    ctx.workspace.invalidate()
                return not existed
        created = atomic_write(real, text)
    except OSError as exc:
        raise ToolError(f"{shown} could not be written: {exc.strerror or exc}") from None
    if created:
        ctx.workspace.invalidate()
    return created


def _holds(real: Path, text: str) -> bool:
    """Whether the file on disk has exactly ``text`` (an editor may keep a write in its buffer unsaved)."""
    try:
        return real.is_file() and read_regular_bytes(real, str(real), len(text.encode()) + 1)[0] == text.encode()
    except (OSError, ToolError):
        return False


def _count(text: str) -> str:
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return f"{lines} line{'s' * (lines != 1)}"


# --- tool objects ------------------------------------------------------------------

READ_FILE = function_tool(
    read_file, read_only=True,
    prompt_hint="read_file before editing a file; page long files with offset.",
)
WRITE_FILE = function_tool(
    write_file, preview=preview_write_file,
    prompt_hint="write_file only for new files or complete rewrites; edit_file for changes.",
)
EDIT_FILE = function_tool(
    edit_file, preview=preview_edit_file,
    prompt_hint="edit_file with an exact, unique old_string copied from read_file's output.",
)
GLOB = function_tool(glob, read_only=True, prompt_hint="glob to find files by name; grep to find text in them.")
READ_MANY_FILES = function_tool(
    read_many_files, read_only=True, prompt_hint="read_many_files to read several related files in one call.",
)
MULTI_EDIT = function_tool(
    multi_edit, preview=preview_multi_edit,
    prompt_hint="multi_edit for several changes to one file: all apply or none do.",
)
LIST_DIR = function_tool(list_dir, read_only=True, prompt_hint="list_dir to see a project's layout.")

CORE_FILE_TOOLS = [READ_FILE, WRITE_FILE, EDIT_FILE, GLOB]
EDIT_PLUS = ToolSet(
    "edit-plus",
    [READ_MANY_FILES, MULTI_EDIT, LIST_DIR],
    description="Several files at once: read_many_files, multi_edit, list_dir.",
)
