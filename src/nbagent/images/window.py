"""Which images a request carries: the newest ``limit`` of the history's, the rest as their captions.

Deterministic from the history alone, so a request is a prefix of the next one until a new image
pushes the oldest out: from that image's message on the request changes once (the provider's cache
is read up to it), and stays the same again after. A message keeps its caption lines in its text
either way, so an image that falls out of the window leaves its caption where it was.
"""

from __future__ import annotations

from typing import Any

from .image import MESSAGE_KEY, images_of

DEFAULT_LIMIT = 4


def windowed(messages: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """``messages`` with images kept on the newest ``limit`` (0: none); a message that loses some is
    a copy, the others are the same objects (the adapters cache their wire form by identity)."""
    left = max(0, limit)
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        images = images_of(out[i])
        if not images and MESSAGE_KEY not in out[i]:
            continue
        keep = images[len(images) - min(left, len(images)):] if left else []
        left -= len(keep)
        if len(keep) != len(images) or len(images) != len(out[i].get(MESSAGE_KEY) or ()):
            out[i] = _with_images(out[i], keep)
    return out


def _with_images(message: dict[str, Any], images: list[dict[str, Any]]) -> dict[str, Any]:
    copy = {k: v for k, v in message.items() if k != MESSAGE_KEY}
    if images:
        copy[MESSAGE_KEY] = images
    return copy


def carried_tokens(messages: list[dict[str, Any]]) -> int:
    """The estimated tokens of the images ``messages`` carry."""
    return sum(int(i.get("tokens") or 0) for m in messages for i in images_of(m))
