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


class ImagePlaces:
    """Where a growing history's images are, each message looked at once: the history is append-only,
    so while the message last looked at is still in its place, only the messages after it are new, and a
    step costs the same on a long history as on a short one (tests/engine/test_flat_steps.py). A
    compaction or a pruning cut puts other objects there, and the history is looked at anew once."""

    def __init__(self) -> None:
        self._seen = 0
        self._last: dict[str, Any] | None = None
        self._places: list[int] = []

    def of(self, messages: list[dict[str, Any]]) -> list[int]:
        """The indexes of the messages that carry images (or an image key), oldest first."""
        if not (self._seen and len(messages) >= self._seen and messages[self._seen - 1] is self._last):
            self._seen, self._places = 0, []
        for i in range(self._seen, len(messages)):
            if MESSAGE_KEY in messages[i]:  # images_of finds none without it
                self._places.append(i)
        self._seen = len(messages)
        self._last = messages[-1] if messages else None
        return self._places


def windowed(messages: list[dict[str, Any]], limit: int,
             places: list[int] | None = None) -> list[dict[str, Any]]:
    """``messages`` with images kept on the newest ``limit`` (0: none); a message that loses some is
    a copy, the others are the same objects (the adapters cache their wire form by identity).
    ``places``: where the images are (ImagePlaces.of), when the caller keeps track of them."""
    left = max(0, limit)
    out = list(messages)
    for i in (reversed(places) if places is not None else range(len(out) - 1, -1, -1)):
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


def carried_tokens(messages: list[dict[str, Any]], places: list[int] | None = None) -> int:
    """The estimated tokens of the images ``messages`` carry; ``places``: where they can be (ImagePlaces.of),
    so that a step does not look at every message of a long history again."""
    where = range(len(messages)) if places is None else (i for i in places if i < len(messages))
    return sum(int(i.get("tokens") or 0) for at in where for i in images_of(messages[at]))
