"""Sortable ids: a millisecond timestamp then randomness, so ids order by creation time."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _b32(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new_id() -> str:
    """26 characters like a ULID: 10 of time (ms), 16 of randomness; sorts by creation."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    return _b32(ms, 10) + _b32(rand, 16)


def short_id(prefix: str = "") -> str:
    return prefix + os.urandom(6).hex()
