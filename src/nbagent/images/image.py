"""One prepared image as a message carries it, and what it costs a model in tokens."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MESSAGE_KEY = "images"
"""A message's prepared images: ``message["images"] = [Image.to_dict(), ...]`` (tool and user messages)."""


@dataclass(frozen=True)
class Image:
    mime: str
    """What ``data`` holds: "image/png" or "image/jpeg"."""
    data: str
    """The bytes to send, base64."""
    width: int
    height: int
    caption: str
    """Where it came from, its type and size as found: the text a model that cannot see gets instead."""

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.width, self.height)

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.data}"

    def label(self) -> str:
        """The text that goes beside the image itself (the caption and the size it is shown at)."""
        return f"{self.caption} (shown at {self.width}x{self.height})"

    def to_dict(self) -> dict[str, Any]:
        return {"mime": self.mime, "data": self.data, "width": self.width, "height": self.height,
                "caption": self.caption, "tokens": self.tokens}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Image":
        return cls(str(d["mime"]), str(d["data"]), int(d["width"]), int(d["height"]), str(d.get("caption", "")))


def estimate_tokens(width: int, height: int) -> int:
    """Input tokens of one image, by OpenAI's documented rule for detail "high" (the default for a
    chart this size): fit in 2048x2048, shortest side down to 768, 170 per 512-pixel tile plus 85.
    Other providers count differently; this is the estimate used for pruning and shown before usage
    arrives. The provider's usage, which includes its own count, is what cost is computed from."""
    if width <= 0 or height <= 0:
        return 0
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def images_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's image dicts (none: [])."""
    images = message.get(MESSAGE_KEY)
    return [i for i in images if isinstance(i, dict) and i.get("data")] if isinstance(images, list) else []
