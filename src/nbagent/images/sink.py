"""What a tool call collects: each image it met, prepared, and the caption line its text shows instead.

A tool renders its text as before; where an image is, it asks the sink for the line to put there.
The sink prepares the image (nbagent.images.prepare) and keeps it for the tool's result message; past
``limit`` images in one call, or for bytes that are not a readable image, the line is the caption
alone and says why.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .image import Image
from .prepare import SVG, ImageError, Source, prepare

PER_CALL = 8
"""Images one tool call prepares at most (a notebook of fifty plots is read as fifty captions after these)."""
SVG_TEXT_LIMIT = 2_000
"""An SVG up to this many characters goes into the text too: a model that cannot see can still read it."""


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{int(size)} bytes" if unit == "bytes" else (f"{size:.1f} {unit}" if size < 10 else f"{size:.0f} {unit}")
        size /= 1024
    return f"{n} bytes"


def caption_of(where: str, source: Source) -> str:
    dims = f" {source.width}x{source.height}" if source.width and source.height else ""
    size = f", {human_size(source.size)}" if source.size else ""
    return f"{where}: {source.mime}{dims}{size}" if where else f"{source.mime}{dims}{size}"


class ImageSink:
    def __init__(self, max_side: int = 1024, limit: int = PER_CALL):
        self.max_side = max_side
        self.limit = limit
        self.images: list[Image] = []
        self.skipped = 0

    def add_bytes(self, raw: bytes, mime: str, where: str) -> str:
        """The caption line for an image given as bytes; the image is kept when it can be read."""
        if len(self.images) >= self.limit:
            self.skipped += 1
            return f"[image {where}: {mime}, {human_size(len(raw))}; not attached: this call already has {self.limit}]"
        try:
            image, source = prepare(raw, mime, "", self.max_side)
        except ImageError as exc:
            return f"[image {where}: {mime}, {human_size(len(raw))}; {exc}]"
        caption = caption_of(where, source)
        self.images.append(Image(image.mime, image.data, image.width, image.height, caption))
        return f"[image {len(self.images)}: {caption}]"

    def add_output(self, mime: str, data: Any, where: str) -> str:
        """The caption line for a notebook output's image (base64 text, or SVG markup)."""
        text = "".join(data) if isinstance(data, list) else str(data)
        if mime == SVG:
            line = self.add_bytes(text.encode(), SVG, where)
            return f"{line}\n{text}" if len(text) <= SVG_TEXT_LIMIT else line
        try:
            raw = base64.b64decode(text, validate=False)  # skips the line breaks of nbformat's base64
        except (binascii.Error, ValueError):
            return f"[image {where}: {mime}; its base64 data is damaged]"
        return self.add_bytes(raw, mime, where)

    def dicts(self) -> list[dict[str, Any]]:
        return [i.to_dict() for i in self.images]
