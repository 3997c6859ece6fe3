"""What the user attaches to a prompt, made into text and images once, when the prompt is given.

``agent.run(prompt, attach=[...])`` takes, by what an object can do rather than by its type (the
engine imports neither matplotlib, PIL, pandas nor IPython): a figure (``savefig``), a PIL image
(``save`` and ``mode``), PNG or JPEG bytes, a path to an image or a text file, a DataFrame (``dtypes``,
``shape``, ``head``: a compact table), an IPython display object or anything with rich reprs
(``_repr_png_``, ``_repr_jpeg_``, ``_repr_svg_``, ``_repr_html_``, ``_repr_markdown_``,
``_repr_mimebundle_``), or a notebook output (an nbformat output dict). Each becomes a few lines of
text after the prompt ("[attachment 1: ...]") and, for images, an image on the user message.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..images import Image, ImageSink
from ..tools.nbshrink import render_output

TEXT_LIMIT = 6_000
"""Characters of one attachment's text at most (a file, a table, an output)."""
TABLE_ROWS = 10
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                  ".webp": "image/webp", ".svg": "image/svg+xml"}


@dataclass
class Attached:
    text: str = ""
    """The lines that follow the prompt (empty: nothing attached)."""
    images: list[Image] = field(default_factory=list)


def attach(items: Any, max_side: int = 1024) -> Attached:
    """``items`` (one object or a list of them) as an Attached; raises TypeError for an object it
    cannot show, ValueError for bytes or a path that is not what it claims."""
    if items is None:
        return Attached()
    if not isinstance(items, (list, tuple)):
        items = [items]
    sink = ImageSink(max_side, limit=max(8, len(items)))
    lines = [_one(item, n, sink) for n, item in enumerate(items, 1)]
    return Attached("\n".join(lines), list(sink.images))


def _one(item: Any, n: int, sink: ImageSink) -> str:
    return _as_line(item, f"attachment {n}", sink)


def _as_line(item: Any, where: str, sink: ImageSink) -> str:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return _bytes_line(bytes(item), where, sink)
    if isinstance(item, (str, Path)):
        return _path(Path(item), where, sink)
    if isinstance(item, dict) and "output_type" in item:
        return _output(item, where, sink)
    return _object_line(item, where, sink)


def _object_line(item: Any, where: str, sink: ImageSink) -> str:
    """An object, by what it can do: a figure, a PIL image, a DataFrame, or its rich reprs."""
    if _has(item, "savefig") and hasattr(item, "canvas"):
        out = io.BytesIO()
        item.savefig(out, format="png")
        return sink.add_bytes(out.getvalue(), "image/png", f"{where} ({type(item).__name__})")
    if _has(item, "save") and hasattr(item, "mode") and hasattr(item, "size"):
        out = io.BytesIO()
        item.save(out, format="PNG")
        return sink.add_bytes(out.getvalue(), "image/png", f"{where} (a {item.mode} image)")
    if hasattr(item, "dtypes") and hasattr(item, "shape") and _has(item, "head"):
        return f"[{where}: {_table(item)}]"
    bundle = mime_bundle(item)
    if bundle:
        return _output({"output_type": "display_data", "data": bundle}, where, sink)
    raise TypeError(f"cannot attach a {type(item).__name__}: give a figure, an image, PNG or JPEG bytes, a path, "
                    "a DataFrame or an object that displays in a notebook")


def _has(item: Any, name: str) -> bool:
    return callable(getattr(item, name, None))


def _bytes_line(raw: bytes, where: str, sink: ImageSink) -> str:
    mime = "image/png" if raw[:8] == b"\x89PNG\r\n\x1a\n" else "image/jpeg" if raw[:3] == b"\xff\xd8\xff" else None
    if mime is None:
        raise ValueError(f"{where}: bytes that are neither PNG nor JPEG")
    return sink.add_bytes(raw, mime, where)


def _path(path: Path, where: str, sink: ImageSink) -> str:
    path = path.expanduser()
    if not path.is_file():
        raise ValueError(f"{where}: {path} is not a file")
    mime = IMAGE_SUFFIXES.get(path.suffix.lower())
    if mime is not None:
        return sink.add_bytes(path.read_bytes(), mime, f"{where} ({path.name})")
    text = path.read_text(encoding="utf-8", errors="replace")
    cut = f"\n[... {len(text) - TEXT_LIMIT:,} more characters]" if len(text) > TEXT_LIMIT else ""
    return f"[{where}: {path.name}]\n{text[:TEXT_LIMIT]}{cut}"


def _output(output: dict, where: str, sink: ImageSink) -> str:
    return f"[{where}: an output]\n" + render_output(output, TEXT_LIMIT, None, sink, where)


def _table(frame: Any) -> str:
    """A DataFrame in few characters: its shape, each column's dtype, its first rows."""
    shape = tuple(frame.shape)
    rows, cols = shape[0], shape[1] if len(shape) > 1 else 1
    dtypes = frame.dtypes
    kinds = ", ".join(f"{name}: {kind}" for name, kind in dtypes.items()) if hasattr(dtypes, "items") else str(dtypes)
    first = frame.head(TABLE_ROWS)
    head = first.to_string() if _has(first, "to_string") else repr(first)
    more = f"\n({rows - TABLE_ROWS:,} more rows)" if rows > TABLE_ROWS else ""
    text = f"{type(frame).__name__} of {rows:,} rows x {cols:,} columns; dtypes: {kinds}\n{head}{more}"
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + "\n[... cut]"


_REPRS = (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg"), ("_repr_svg_", "image/svg+xml"),
          ("_repr_html_", "text/html"), ("_repr_markdown_", "text/markdown"), ("_repr_latex_", "text/latex"))


def mime_bundle(item: Any) -> dict[str, Any]:
    """The MIME bundle an object displays as in a notebook, from its own rich-repr methods (IPython's
    protocol, read without IPython); images base64-encoded as nbformat keeps them."""
    import base64

    bundle: dict[str, Any] = {}
    method = getattr(item, "_repr_mimebundle_", None)
    if callable(method):
        try:
            found = method()
        except TypeError:  # the protocol passes include/exclude; some implementations require them
            found = method(include=None, exclude=None)
        data = found[0] if isinstance(found, tuple) else found
        bundle.update(data if isinstance(data, dict) else {})
    for name, mime in _REPRS:
        method = getattr(item, name, None)
        if mime in bundle or not callable(method):
            continue
        value = method()
        value = value[0] if isinstance(value, tuple) else value
        if value is None:
            continue
        if isinstance(value, bytes) and mime in ("image/png", "image/jpeg"):
            value = base64.b64encode(value).decode("ascii")
        bundle[mime] = value
    if bundle and "text/plain" not in bundle:
        bundle["text/plain"] = f"<{type(item).__name__}>"
    return {k: v for k, v in bundle.items() if isinstance(v, (str, list, dict))}
