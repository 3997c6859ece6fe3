"""JSON in and out of the store: orjson when it is installed, else the standard library.

orjson is about twice as fast both ways, which is most of a resume's time. Both give the same
Python values."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - exercised only where orjson is missing
    orjson = None


def _jsonable(value: Any) -> Any:
    """Validated tool arguments may hold pydantic models (todo_write's items); store their data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _std_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_jsonable)


def dumps(value: Any) -> str:
    if orjson is not None:
        try:
            return orjson.dumps(value, default=_jsonable, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # e.g. an integer beyond 64 bits: the standard library copes
            pass
    return _std_dumps(value)


def loads(text: str | bytes) -> Any:
    return orjson.loads(text) if orjson is not None else json.loads(text)
