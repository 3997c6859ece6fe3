"""Cheap, bounded fingerprints of kernel values, to tell an object changed in place from one left alone.

``fingerprint(value, budget)`` returns a short digest, ``IMMUTABLE`` for values that cannot change in
place (numbers, strings, bytes, None, ranges, tuples and frozensets of such), or None: "not checked".
None is the honest answer for anything else (an arbitrary object, a function) and for anything too big
for the budget; nothing is guessed. What is fingerprinted and how:

- pandas DataFrame/Series/Index: shape, dtypes, column labels, and every row up to ``2 * SAMPLE_ROWS``
  rows, else a sample of ``SAMPLE_ROWS`` rows (the first and last ones and an even spread between):
  numeric columns by their bytes, others through ``pandas.util.hash_pandas_object``; a change to an
  unsampled row of a large frame goes unseen;
- NumPy arrays: shape, dtype, strides and the bytes (all of them up to ``FULL_BYTES``, else a sample);
- lists, dicts, sets, bytearrays: their items, recursively, up to ``MAX_ITEMS`` items in all;
- functions and classes: what a rebinding inside them changes (a function's code, defaults and
  attributes; a class's own attributes), by identity; builtin functions cannot change.

pandas and NumPy are never imported here: a value is a DataFrame only if pandas is already loaded.
"""

from __future__ import annotations

import hashlib
import sys
import time
import types
from typing import Any

IMMUTABLE = "immutable"
"""The fingerprint of a value that cannot change in place: a rebinding is its only change."""
FULL_BYTES = 1024 * 1024
"""Arrays up to this size are hashed whole (about a millisecond); larger ones through a sample."""
SAMPLE_ROWS = 512
"""Rows of a large frame (or chunks of a large array) that go into its fingerprint."""
MAX_ITEMS = 20_000
"""Items of a list, dict or set (nested ones included) beyond which it is "not checked"."""
_SCALARS = (int, float, complex, bool, str, bytes, type(None), range, types.EllipsisType)


class Budget:
    """Time and items left for one namespace's fingerprints; spent, it makes every later one "not checked"."""

    def __init__(self, seconds: float):
        self.deadline = time.perf_counter() + seconds

    def spent(self) -> bool:
        return time.perf_counter() > self.deadline


def fingerprint(value: Any, budget: Budget | None = None) -> str | None:
    """A digest of ``value``'s contents, ``IMMUTABLE``, or None ("not checked")."""
    if budget is not None and budget.spent():
        return None
    if isinstance(value, _SCALARS):
        return IMMUTABLE
    try:
        digest = _digest(value)
    except Exception:  # an object whose hashing fails (odd dtype, a broken __eq__): not checked
        return None
    return digest


def _digest(value: Any) -> str | None:
    pd, np = sys.modules.get("pandas"), sys.modules.get("numpy")
    if pd is not None and isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        return _frame(value, pd, np)
    if np is not None and isinstance(value, np.ndarray):
        return _array(value, np)
    if isinstance(value, (tuple, frozenset)) and _all_immutable(value):
        return IMMUTABLE
    if isinstance(value, (list, tuple, dict, set, frozenset, bytearray)):
        h = hashlib.blake2b(digest_size=16)
        if not _feed(h, value, [MAX_ITEMS]):
            return None
        return h.hexdigest()
    if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return IMMUTABLE
    if isinstance(value, (types.FunctionType, type)):
        return _definition(value)
    return None


def _definition(value: Any) -> str | None:
    """A function or class by the identities of what defines it: its code and defaults, its attributes.

    Python's own tuple hash is enough here: the digest is only ever compared with the same object's."""
    attrs = vars(value)
    if len(attrs) > MAX_ITEMS:
        return None
    parts = tuple((name, id(item)) for name, item in list(attrs.items()))
    if isinstance(value, types.FunctionType):
        parts += (id(value.__code__), id(value.__defaults__), id(value.__kwdefaults__))
    return f"def:{hash(parts):x}"


def _all_immutable(value: Any) -> bool:
    return len(value) <= MAX_ITEMS and all(isinstance(x, _SCALARS) for x in value)


def _feed(h: Any, value: Any, left: list[int]) -> bool:
    """Hash a container's items (recursively); False when it holds something not fingerprintable
    or more than MAX_ITEMS items in all."""
    left[0] -= 1
    if left[0] < 0:
        return False
    if isinstance(value, _SCALARS):
        h.update(f"{type(value).__name__}:{value!r};".encode("utf-8", "surrogatepass"))
        return True
    if isinstance(value, bytearray):
        if len(value) > FULL_BYTES:
            return False
        h.update(b"bytearray:" + bytes(value))
        return True
    if isinstance(value, (list, tuple, dict)) and _flat(value):
        # Only numbers, strings and the like inside: one repr (exact for these types, and C-fast).
        left[0] -= len(value)
        if left[0] < 0:
            return False
        h.update(repr(value).encode("utf-8", "surrogatepass"))
        return True
    if isinstance(value, dict):
        h.update(f"dict{len(value)}(".encode())
        for key, item in list(value.items()):
            if not (_feed(h, key, left) and _feed(h, item, left)):
                return False
        h.update(b")")
        return True
    if isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}{len(value)}(".encode())
        return all(_feed(h, item, left) for item in list(value)) and (h.update(b")") or True)
    if isinstance(value, (set, frozenset)):
        if len(value) > left[0]:
            return False
        left[0] -= len(value)
        # Order-free: the sorted hashes of the items (which are hashable, being in a set).
        for part in sorted(hash(x) for x in list(value)):
            h.update(part.to_bytes(8, "little", signed=True))
        return True
    inner = _digest(value)  # an array or a frame inside a list
    if inner is None:
        return False
    h.update(inner.encode())
    return True


_SCALAR_TYPES = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _flat(value: Any) -> bool:
    """A list, tuple or dict of exactly-typed scalars only (subclasses may have their own repr)."""
    try:
        if isinstance(value, dict):
            return set(map(type, value)) <= _SCALAR_TYPES and set(map(type, value.values())) <= _SCALAR_TYPES
        return set(map(type, value)) <= _SCALAR_TYPES
    except RuntimeError:  # changed size while being read (the kernel's thread): take the slow path
        return False


def _frame(value: Any, pd: Any, np: Any) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{type(value).__name__}{value.shape}".encode())
    if isinstance(value, pd.DataFrame):
        h.update(repr(list(value.columns)).encode("utf-8", "surrogatepass"))
        h.update(repr([d.str if isinstance(d, np.dtype) else str(d) for d in value.dtypes]).encode())
    else:
        h.update(f"{value.dtype}:{value.name!r}".encode("utf-8", "surrogatepass"))
    rows = len(value)
    sample = value if rows <= 2 * SAMPLE_ROWS else value.take(_positions(rows, np))
    if isinstance(sample, pd.DataFrame):
        _columns(h, sample, pd, np)
        _values(h, sample.index, pd, np)
    elif isinstance(sample, pd.Series):
        _values(h, sample, pd, np)
        _values(h, sample.index, pd, np)
    else:
        _values(h, sample, pd, np)
    return h.hexdigest()


_RAW_KINDS = "biufcmM"
"""NumPy kinds whose bytes are their values (numbers, booleans, datetimes): hashed as bytes."""


def _columns(h: Any, sample: Any, pd: Any, np: Any) -> None:
    """A frame's sampled rows, one dtype at a time (a frame has a few dtypes, often one): numeric
    columns as one block of bytes, the others through hash_pandas_object. (hash_pandas_object on the
    whole sample, or a selection per column, costs ~0.25 ms a column: 40 frames of a 4 GB namespace
    could not afford it within the budget.)"""
    dtypes = sample.dtypes
    kinds = sorted(set(dtypes), key=str)
    for dtype in kinds:
        part = sample if len(kinds) == 1 else sample.loc[:, (dtypes == dtype).to_numpy()]
        if isinstance(dtype, np.dtype) and dtype.kind in _RAW_KINDS:
            h.update(np.ascontiguousarray(part.to_numpy()).tobytes())
        else:
            h.update(np.asarray(pd.util.hash_pandas_object(part, index=False)).tobytes())


def _values(h: Any, values: Any, pd: Any, np: Any) -> None:
    """A Series or Index: its bytes when numeric, else ``pandas.util.hash_pandas_object`` of it."""
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, np.dtype) and getattr(dtype, "kind", "") in _RAW_KINDS:
        h.update(np.ascontiguousarray(values.to_numpy()).tobytes())
        return
    hashed = pd.util.hash_pandas_object(values, index=False)
    h.update(np.asarray(hashed).tobytes())


def _frame_bytes(value: Any) -> int:
    usage = value.memory_usage(deep=False)  # never deep: that walks every string
    return int(usage.sum()) if hasattr(usage, "sum") else int(usage)


def _positions(rows: int, np: Any) -> Any:
    """The first and last rows and an even spread between them (SAMPLE_ROWS in all)."""
    edge = SAMPLE_ROWS // 4
    middle = np.linspace(edge, rows - edge - 1, SAMPLE_ROWS - 2 * edge).astype(np.int64)
    return np.concatenate([np.arange(edge), middle, np.arange(rows - edge, rows)])


def _array(value: Any, np: Any) -> str | None:
    if value.dtype.hasobject:
        return None  # object arrays hold arbitrary objects: not checked
    h = hashlib.blake2b(digest_size=16)
    h.update(f"ndarray{value.shape}{value.dtype.str}{value.strides}".encode())
    if value.nbytes <= FULL_BYTES:
        h.update(np.ascontiguousarray(value).tobytes())
        return h.hexdigest()
    if not (value.flags.c_contiguous or value.flags.f_contiguous):
        return None  # a large strided view: a copy to sample it would cost too much
    flat = value.ravel(order="K")  # a view, for a contiguous array
    chunk = max(1, 1024 // max(1, value.itemsize))
    for start in np.linspace(0, flat.size - chunk, SAMPLE_ROWS).astype(np.int64):
        h.update(flat[start:start + chunk].tobytes())
    return h.hexdigest()


def held_bytes(value: Any) -> int:
    """About how much memory keeping ``value`` alive holds (what the undo cap counts)."""
    pd, np = sys.modules.get("pandas"), sys.modules.get("numpy")
    try:
        if np is not None and isinstance(value, np.ndarray):
            return int(value.nbytes)
        if pd is not None and isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
            return _frame_bytes(value)
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            items = list(value.items())[:100] if isinstance(value, dict) else list(value)[:100]
            if not items:
                return sys.getsizeof(value)
            each = sum(sys.getsizeof(x) for x in items) / len(items)
            return int(sys.getsizeof(value) + each * len(value))
        return sys.getsizeof(value)
    except Exception:
        return 0
