"""The repo map: a compact list of the workspace's files and their symbols for the system prompt.

Symbols (classes, functions, methods, with their signatures) come from tree-sitter
grammars (tree-sitter-language-pack) for the common languages, Python first; notebooks
count as Python (their code cells). Files are ordered by the import graph, most imported
first, and listed until the budget (2,500 characters, 60 files) is spent. The walk is the
workspace's ignore-aware one (nbagent.workspace.walker), so ignored files never appear. Each file's
symbols and imports are cached in the state directory's repomap.json under its mtime and size, so
a warm build only lists and stats files. The cache is workspace input like any other (a repository
can ship one): it is read safely, used only when well formed, and every file it names is checked
to be a regular file inside the workspace before it is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..render.escape import truncate
from ..render.redaction import logger
from ..workspace.atomic import atomic_write
from ..workspace.root import confined
from ..workspace.safe_read import TooLarge, read_bytes
from ..workspace.state_dir import REPOMAP, find_state_file, location, state_file, usable_state_dir
from ..workspace.walker import list_files

log = logger("nbagent.repomap")

BUDGET_CHARS = 2_500
MAX_FILES = 60
MAX_FILE_BYTES = 512_000
"""Bigger files are listed without symbols (generated or vendored code, most likely)."""
CACHE_NAME = REPOMAP
CACHE_MAX_BYTES = 64 << 20
LISTING_TTL = 60.0
CACHE_VERSION = 4
MEMO_ENTRIES = 20_000
"""Files analysed in this process, by content: another copy of the same files (a batch's tasks, each
in its own worktree with fresh mtimes) reuses the symbols instead of parsing again."""
_MEMO: dict[tuple[str, bytes], tuple[tuple, tuple]] = {}
_MEMO_LOCK = threading.Lock()
HEADER = "Repository map (most imported files first; symbols with signatures):"

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".ipynb": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust",
    ".java": "java", ".rb": "ruby", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".php": "php", ".kt": "kotlin", ".scala": "scala", ".swift": "swift", ".r": "r",
    ".R": "r", ".jl": "julia", ".lua": "lua", ".sh": "bash",
}
# Node types that declare a symbol, across grammars, and the word shown for them.
SYMBOL_NODES = {
    "class_definition": "class", "function_definition": "def", "decorated_definition": None,
    "class_declaration": "class", "function_declaration": "function", "method_definition": "method",
    "method_declaration": "method", "interface_declaration": "interface", "type_alias_declaration": "type",
    "enum_declaration": "enum", "function_item": "fn", "struct_item": "struct", "enum_item": "enum",
    "trait_item": "trait", "impl_item": "impl", "type_spec": "type", "class": "class", "module": "module",
    "method": "def", "singleton_method": "def", "struct_specifier": "struct", "class_specifier": "class",
    "object_declaration": "object", "protocol_declaration": "protocol",
}
CONTAINERS = {"class_definition", "class_declaration", "impl_item", "trait_item", "class", "module",
              "class_body", "declaration_list", "block", "body_statement", "interface_declaration",
              "decorated_definition", "object_declaration", "class_specifier", "field_declaration_list",
              "program", "source_file", "module_body", "export_statement", "translation_unit"}
BODY_FIELDS = ("body", "block")
_JS_IMPORT = re.compile(r"""(?:import\s[^'"]*?from\s*|import\s*\(?|require\s*\()\s*['"]([^'"]+)['"]""")


@dataclass
class FileInfo:
    path: str
    symbols: list[str]
    imports: list[str]


def _parser(language: str):
    from tree_sitter_language_pack import get_parser  # pyright: ignore[reportMissingImports]  (optional)

    return get_parser(language)  # type: ignore[arg-type]


def _signature(node, source: bytes) -> str:
    body = next((node.child_by_field_name(f) for f in BODY_FIELDS if node.child_by_field_name(f)), None)
    end = body.start_byte if body is not None else node.end_byte
    comment = next((c for c in node.children if c.type == "comment" and c.start_byte < end), None)
    if comment is not None:  # a comment between the header and the body is not the signature
        end = comment.start_byte
    text = source[node.start_byte:end].decode("utf-8", "replace")
    text = " ".join(text.split()).rstrip(":{ ").strip()
    return truncate(text, 110)


def extract_symbols(tree, source: bytes, max_symbols: int = 40) -> list[str]:
    """Symbol signatures, methods indented under their class."""
    out: list[str] = []

    def visit(node, depth: int) -> None:
        for child in node.children:
            if len(out) >= max_symbols:
                return
            kind = child.type
            name = child.child_by_field_name("name") if kind in SYMBOL_NODES else None
            if name is not None and SYMBOL_NODES[kind] is not None:
                if _private(source[name.start_byte:name.end_byte]):
                    continue  # helpers are not what a map is for; the budget goes to the API
                out.append("  " * depth + _signature(child, source))
                visit(child, depth + 1)
            elif kind in CONTAINERS or kind.endswith("_body") or kind == "decorated_definition":
                visit(child, depth)

    visit(tree.root_node, 0)
    return out


def _private(name: bytes) -> bool:
    return name.startswith(b"_") and not (name.startswith(b"__") and name.endswith(b"__"))


def python_imports(tree, source: bytes) -> list[str]:
    """Module names imported (relative ones keep their dots: ``.sibling``)."""
    found: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            for child in node.children:
                if child.type in ("dotted_name", "aliased_import"):
                    name = child.child_by_field_name("name") if child.type == "aliased_import" else child
                    found.append(source[name.start_byte:name.end_byte].decode())
        elif node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            if module is not None:
                base = source[module.start_byte:module.end_byte].decode()
                found.append(base)
                if base.strip(".") == "" or base.startswith("."):
                    for name in node.children_by_field_name("name"):
                        text = source[name.start_byte:name.end_byte].decode().split(" as ")[0]
                        found.append(base + ("" if base.endswith(".") else ".") + text)
        elif node.type in ("module", "block", "if_statement", "try_statement", "function_definition",
                           "class_definition", "decorated_definition", "else_clause", "except_clause"):
            stack.extend(node.children)
    return found


def notebook_source(raw: bytes) -> bytes:
    """A notebook's code cells as one Python source (magics and shell lines blanked out)."""
    try:
        cells = json.loads(raw).get("cells", [])
    except (ValueError, AttributeError):
        return b""
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            parts.append("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                   for line in text.splitlines()))
    return "\n\n".join(parts).encode("utf-8", "replace")


def analyse(path: Path, rel: str) -> FileInfo:
    suffix = Path(rel).suffix
    language = LANGUAGES.get(suffix)
    if language is None:
        return FileInfo(rel, [], [])
    try:  # never a FIFO, never through a link: the walk or the cache may name one
        source = read_bytes(path, max_bytes=MAX_FILE_BYTES)[0]
    except TooLarge:
        return FileInfo(rel, [], [])
    if suffix == ".ipynb":
        source = notebook_source(source)
    digest = (language, hashlib.blake2b(source, digest_size=16).digest())
    with _MEMO_LOCK:
        known = _MEMO.get(digest)
    if known is not None:
        return FileInfo(rel, list(known[0]), list(known[1]))
    info = _analyse_source(language, source, rel)
    with _MEMO_LOCK:
        _MEMO[digest] = (tuple(info.symbols), tuple(info.imports))
        while len(_MEMO) > MEMO_ENTRIES:
            _MEMO.pop(next(iter(_MEMO)))
    return info


def _analyse_source(language: str, source: bytes, rel: str) -> FileInfo:
    try:
        tree = _parser(language).parse(source)
    except Exception as exc:  # a grammar missing from this build: list the file without symbols
        log.debug("no symbols for %s: %s", rel, exc)
        return FileInfo(rel, [], [])
    if language == "python":
        imports = python_imports(tree, source)
    elif language in ("javascript", "typescript", "tsx"):
        imports = _JS_IMPORT.findall(source.decode("utf-8", "replace"))
    else:
        imports = []
    return FileInfo(rel, extract_symbols(tree, source), imports)


def _module_index(files: list[str]) -> dict[str, str]:
    """Python module name -> file, for the repo root and for a src/ layout."""
    index: dict[str, str] = {}
    for rel in files:
        if not rel.endswith(".py"):
            continue
        module = rel[:-3].replace("/", ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        index.setdefault(module, rel)
        if module.startswith("src."):
            index.setdefault(module[4:], rel)
    return index


def resolve_imports(info: FileInfo, modules: dict[str, str], files: set[str]) -> set[str]:
    """The workspace files ``info`` imports."""
    targets: set[str] = set()
    here = posixpath.dirname(info.path)
    for name in info.imports:
        if info.path.endswith((".py", ".pyi", ".ipynb")):
            if name.startswith("."):
                dots = len(name) - len(name.lstrip("."))
                base = here
                for _ in range(dots - 1):
                    base = posixpath.dirname(base)
                module = ".".join(p for p in [*base.split("/"), *name.lstrip(".").split(".")] if p)
            else:
                module = name
            while module:
                if module in modules:
                    targets.add(modules[module])
                    break
                module = module.rpartition(".")[0] if module.count(".") and module not in modules else ""
        elif name.startswith("."):
            base = posixpath.normpath(posixpath.join(here, name))
            for candidate in (base, *(base + ext for ext in (".ts", ".tsx", ".js", ".jsx", ".mjs")),
                              *(base + "/index" + ext for ext in (".ts", ".tsx", ".js"))):
                if candidate in files:
                    targets.add(candidate)
                    break
    targets.discard(info.path)
    return targets


class RepoMap:
    """The map of one workspace; ``block()`` rebuilds from the mtime cache when called."""

    def __init__(self, root: str | os.PathLike[str], *, budget: int = BUDGET_CHARS, max_files: int = MAX_FILES):
        self.root = Path(os.path.realpath(root))
        self.budget, self.max_files = budget, max_files
        self.cache_path = location(self.root) / REPOMAP
        self._cache: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self.last_stats: dict[str, int] = {}
        self._relisted = False

    def _load_cache(self) -> dict[str, Any]:
        if self._cache is None:
            cache: dict[str, Any] = {}
            try:  # workspace input like any other: read safely, and used only if it is well formed
                path = find_state_file(self.root, REPOMAP)
                data = orjson.loads(read_bytes(path, max_bytes=CACHE_MAX_BYTES)[0]) if path else None
                if isinstance(data, dict) and _well_formed(data):
                    cache = data
            except (OSError, ValueError, AttributeError, orjson.JSONDecodeError):
                pass
            cache.setdefault("version", CACHE_VERSION)
            cache.setdefault("files", {})
            self._cache = cache
        return self._cache

    def cache_data(self) -> dict[str, Any]:
        """The cache as it stands (after ``block()``: every listed file's symbols, the listing, the text)."""
        return self._load_cache()

    def transplant(self, data: dict[str, Any]) -> bool:
        """Take the cache of a map built over the same files in another folder, so that the next
        ``block()`` only stats files (no listing, no reading). For a batch: every copy is a checkout
        of one commit, the same files with new times. The files are not looked at here: each entry
        keeps its size and no time, and the next scan takes a file of that size as the one mapped
        (and records its time); a file that differs, or is missing, is analysed or dropped by that
        scan as usual. False, and nothing written, if ``data`` is not a map's cache."""
        listing = data.get("listing")
        if not isinstance(listing, dict) or data.get("version") != CACHE_VERSION:
            return False
        files = {rel: [[None, entry[0][1]], entry[1], entry[2]] for rel, entry in data.get("files", {}).items()}
        usable_state_dir(self.root)  # made first: it changes the root's time, which the signature holds
        fresh = {**listing, "at": time.time(), "sig": _dir_signature(self.root, listing["dirs"])}
        with self._lock:
            self._save({**data, "files": files, "listing": fresh})
        return True

    def infos(self) -> list[FileInfo]:
        """Every listed file's symbols and imports, from the cache where its mtime and size match."""
        infos, _ = self._scan()
        return infos

    def _scan(self, save: bool = True) -> tuple[list[FileInfo], bool]:
        """(infos, whether anything changed since the cache was written); ``save=False`` leaves the
        cache to be written by the caller (once, with the rendered block)."""
        data = self._load_cache()
        files = self._listing(data)
        cache = data["files"]
        fresh: dict[str, Any] = {}
        infos, parsed, timed = [], 0, 0
        base = str(self.root) + os.sep
        real_dirs: dict[str, bool] = {}
        for rel in files:
            folder = posixpath.dirname(rel)
            if folder not in real_dirs:  # a folder reached through a link (a planted listing) is skipped
                real_dirs[folder] = os.path.realpath(base + folder) == os.path.normpath(base + folder)
            info = _regular_inside(self.root, base + rel) if real_dirs[folder] else None
            if info is None:
                continue
            key = [info.st_mtime_ns, info.st_size]
            entry = cache.get(rel)
            if entry is not None and entry[0][0] is None and entry[0][1] == info.st_size:
                entry = [key, entry[1], entry[2]]  # transplanted: the same file, its time now known
                timed += 1
            if entry is None or entry[0] != key:
                try:
                    analysed = analyse(Path(os.path.realpath(base + rel)), rel)
                except OSError:
                    continue
                entry = [key, analysed.symbols, analysed.imports]
                parsed += 1
            fresh[rel] = entry
            infos.append(FileInfo(rel, entry[1], entry[2]))
        self.last_stats = {"files": len(infos), "parsed": parsed}
        changed = bool(parsed) or len(fresh) != len(cache)
        if changed or timed or self._relisted:
            updated = {**data, "version": CACHE_VERSION, "files": fresh, "listing": data.get("listing")}
            if save:
                self._save(updated)
            else:
                self._cache = updated
        return infos, changed

    def _listing(self, data: dict[str, Any]) -> list[str]:
        """The mappable files the ignore rules show; the last walk is reused while no directory changed.

        Reused for at most LISTING_TTL seconds: a file added to a directory that had no listed file
        is not seen through the directory times, only by the next walk.
        """
        cached = data.get("listing")
        self._relisted = False
        if (cached and 0 <= time.time() - cached["at"] < LISTING_TTL
                and _dir_signature(self.root, cached["dirs"]) == cached["sig"]):
            return cached["files"]
        usable_state_dir(self.root)  # made first: making it later would change the root's time
        # Plain strings, not Path objects: at 2,000 files pathlib's parsing was most of a warm build.
        every = list_files(self.root)
        files = [f for f in every if os.path.splitext(f)[1] in LANGUAGES]
        dirs = sorted({posixpath.dirname(f) for f in every} | {""})
        self._relisted = True
        data["listing"] = {"at": time.time(), "dirs": dirs, "sig": _dir_signature(self.root, dirs), "files": files}
        return files

    def _save(self, data: dict[str, Any]) -> None:
        self._cache = data
        try:  # a cache is cheap to lose: no fsync
            atomic_write(state_file(self.root, REPOMAP), orjson.dumps(data), private=True, fsync=False)
        except OSError as exc:
            log.debug("repo map cache not saved: %s", exc)

    def ranked(self) -> list[FileInfo]:
        """Files by how many others import them, then by symbol count, then by path."""
        return rank(self.infos())

    def block(self) -> str:
        """The rendered map; unchanged files since the last build return the cached text at once."""
        with self._lock:
            infos, changed = self._scan(save=False)
            data = self._load_cache()
            settings = [self.budget, self.max_files]
            if not changed and data.get("block") is not None and data.get("settings") == settings:
                if self._relisted:
                    self._save(data)
                return data["block"]
            text = render(rank(infos), self.budget, self.max_files)
            self._save({**self._load_cache(), "block": text, "settings": settings})
            return text


def _dir_signature(root: Path, dirs: list[str]) -> list[int]:
    """Modification times of the directories and their .gitignore files (0 when missing). A directory
    that is a link (or not a directory) counts as missing: a listing through it is never reused."""
    base = str(root)
    sig = []
    for rel in dirs:
        directory = base + ("/" + rel if rel else "")
        try:
            info = os.lstat(directory)
            sig.append(info.st_mtime_ns if stat.S_ISDIR(info.st_mode) else 0)
        except OSError:
            sig.append(0)
        try:
            sig.append(os.stat(directory + "/.gitignore").st_mtime_ns)
        except OSError:
            sig.append(0)
    return sig


def _well_formed(data: Any) -> bool:
    """A cache this version wrote, naming only plain relative paths in listed folders (a planted one
    naming ``../`` or an absolute path, or a listing without the root's signature, is rebuilt)."""
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION or not isinstance(data.get("files"), dict):
        return False
    if not all(_plain(rel) and _entry(value) for rel, value in data["files"].items()):
        return False
    listing = data.get("listing")
    if listing is None:
        return True
    try:
        dirs, files = set(listing["dirs"]), list(listing["files"])
        if not isinstance(listing["at"], (int, float)) or not isinstance(listing["sig"], list):
            return False
    except (KeyError, TypeError, ValueError):
        return False
    every_dir = all(d == "" or _plain(d) for d in dirs) and "" in dirs
    return every_dir and all(_plain(f) and posixpath.dirname(f) in dirs for f in files)


def _entry(value: Any) -> bool:
    """[[mtime_ns or None, size], symbols, imports]"""
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], list) and len(value[0]) == 2
            and isinstance(value[1], list) and isinstance(value[2], list))


def _plain(rel: Any) -> bool:
    return (isinstance(rel, str) and bool(rel) and "\0" not in rel and not rel.startswith("/")
            and all(part not in ("", ".", "..") for part in rel.split("/")))


def _regular_inside(root: Path, path: str) -> os.stat_result | None:
    """The stat of ``path`` if it is a regular file inside ``root`` (a link is confined first)."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            if confined(root, path) is None:
                return None
            info = os.stat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def rank(infos: list[FileInfo]) -> list[FileInfo]:
    """Files by how many others import them, then by symbol count, then by path."""
    names = {i.path for i in infos}
    modules = _module_index(sorted(names))
    imported: dict[str, int] = {}
    for info in infos:
        for target in resolve_imports(info, modules, names):
            imported[target] = imported.get(target, 0) + 1
    return sorted(infos, key=lambda i: (-imported.get(i.path, 0), -len(i.symbols), i.path))


def render(infos: list[FileInfo], budget: int = BUDGET_CHARS, max_files: int = MAX_FILES) -> str:
    if not infos:
        return ""
    lines, used, shown = [HEADER], len(HEADER), 0
    for info in infos:
        if shown >= max_files or used + len(info.path) + 1 > budget:
            break
        lines.append(info.path)
        used += len(info.path) + 1
        shown += 1
        for symbol in info.symbols:
            line = "  " + symbol
            if used + len(line) + 1 > budget:
                break
            lines.append(line)
            used += len(line) + 1
    if shown < len(infos):
        lines.append(f"(and {len(infos) - shown} more files)")
    return "\n".join(lines)
