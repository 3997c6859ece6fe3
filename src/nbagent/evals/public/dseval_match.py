"""DSEval's comparison of a reference value with a submitted one, as its validators configure it.

The options are DSEval's (``compare_fn`` settings in a problem set): ``ignore_order``,
``ignore_index``, ``ignore_names``, ``ignore_dtypes``, ``value_only`` (a one-element list is its
element; a Series, array or list are the same values), ``type_only``, ``strict_type``, ``atol`` and
``rtol`` (numbers and float arrays, as numpy's isclose), ``metrictol`` (a metric at least this share
of the reference's) and ``match_partial`` (DSEval's "partial" credit, which never counts as correct
and so is not looked for here). ``comparison(settings)`` reads a validator's ``compare_fn`` settings
(options, or a problem set's own function as source). Runs in the check's process only.
"""

from __future__ import annotations

from typing import Any, Callable

OPTIONS = {"ignore_order": False, "ignore_index": False, "ignore_names": False, "ignore_dtypes": False,
           "match_partial": False, "value_only": False, "type_only": False, "strict_type": False,
           "atol": 1e-8, "rtol": 1e-5, "metrictol": None}


class Mismatch(Exception):
    """Why two values differ (its message is the reason a check reports)."""


def matcher(options: dict[str, Any] | None = None):
    """A function ``(reference, submitted) -> None`` that raises Mismatch, with these options."""
    config = {**OPTIONS, **(options or {})}
    unknown = sorted(set(config) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown comparison option {unknown[0]!r}")

    def compare(ref: Any, sub: Any) -> None:
        if config["value_only"] and not config["type_only"]:
            ref, sub = strip_container(ref), strip_container(sub)
        same(ref, sub, config)

    return compare


def strip_container(value: Any) -> Any:
    import numpy as np
    import pandas as pd

    if isinstance(value, (list, tuple, set)):
        value = [strip_container(v) for v in value]
    elif isinstance(value, (np.ndarray, pd.Series, pd.Index)):
        value = strip_container(value.tolist())
    elif isinstance(value, pd.DataFrame):
        value = strip_container(value.to_numpy().tolist())
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def same(ref: Any, sub: Any, config: dict[str, Any]) -> None:
    import numpy as np
    import pandas as pd

    if config["type_only"]:
        if type(ref) is not type(sub):
            raise Mismatch(f"Type mismatch: {type(ref).__name__} vs. {type(sub).__name__}")
        return
    either = (lambda *kinds: isinstance(ref, kinds) or isinstance(sub, kinds))
    if either(bool, np.bool_):
        _both(ref, sub, (bool, np.bool_))
        if ref != sub:
            raise Mismatch(f"Wrong value: {ref} vs. {sub}")
    elif either(float, int, np.number):
        _numbers(ref, sub, config)
    elif either(np.ndarray):
        _arrays(ref, sub, config)
    elif either(pd.DataFrame, pd.Series, pd.Index):
        _pandas(ref, sub, config)
    elif either(list, tuple, dict, set):
        _containers(ref, sub, config)
    else:
        try:
            equal = bool(ref == sub)
        except Exception:  # noqa: BLE001 - values that cannot say whether they are equal are not
            raise Mismatch("Couldn't match reference and submission.") from None
        if not equal:
            raise Mismatch(f"Expect {_short(ref)}, got {_short(sub)}")


def _both(ref: Any, sub: Any, kinds: tuple) -> None:
    if not (isinstance(ref, kinds) and isinstance(sub, kinds)):
        raise Mismatch(f"Wrong type: {type(ref).__name__}, {type(sub).__name__}")


def _numbers(ref: Any, sub: Any, config: dict[str, Any]) -> None:
    import numpy as np

    _both(ref, sub, (float, int, np.number))
    if config["metrictol"] is not None:
        if sub < ref * config["metrictol"]:
            raise Mismatch(f"Metric too low (less than {config['metrictol'] * 100:.1f}%): {sub} vs. {ref}")
        return
    if not np.isclose(sub, ref, rtol=config["rtol"], atol=config["atol"]).item():
        raise Mismatch(f"Wrong value: {ref} vs. {sub}")


def _arrays(ref: Any, sub: Any, config: dict[str, Any]) -> None:
    import numpy as np

    _both(ref, sub, (np.ndarray,))
    if config["strict_type"] and ref.dtype != sub.dtype:
        raise Mismatch(f"Wrong dtype: {ref.dtype}, {sub.dtype}")
    if ref.shape != sub.shape:
        raise Mismatch(f"Wrong shape: {ref.shape}, {sub.shape}")
    try:
        if np.issubdtype(ref.dtype, np.floating) and np.issubdtype(sub.dtype, np.floating):
            equal = np.allclose(ref, sub, rtol=config["rtol"], atol=config["atol"], equal_nan=True)
        else:
            equal = np.array_equal(ref, sub)
    except Exception:  # noqa: BLE001
        equal = False
    if not equal:
        raise Mismatch("Numpy arrays are not equal")


def _pandas(ref: Any, sub: Any, config: dict[str, Any]) -> None:
    import pandas as pd

    checks: tuple[tuple[type, Any], ...] = ((pd.DataFrame, pd.testing.assert_frame_equal),
                                            (pd.Series, pd.testing.assert_series_equal),
                                            (pd.Index, pd.testing.assert_index_equal))
    for kind, assert_equal in checks:
        if isinstance(ref, kind) and isinstance(sub, kind):
            break
    else:
        raise Mismatch(f"Mismatched type: {type(ref).__name__}, {type(sub).__name__}")
    sub = sub.copy()
    if config["ignore_names"]:
        sub = _take_names(ref, sub)
    if config["ignore_order"] or config["ignore_index"]:
        ref, sub = _drop_order(ref, sub, config["ignore_order"])
    if config["ignore_dtypes"]:
        try:
            sub = sub.astype(ref.dtypes.to_dict() if isinstance(ref, pd.DataFrame) else ref.dtype)
        except Exception:  # noqa: BLE001 - compared as they are
            pass
    try:
        assert_equal(*_plain(ref, sub))
    except AssertionError as exc:
        raise Mismatch(f"{kind.__name__} not equal: {' '.join(str(exc).split())[:300]}") from None
    except Exception:  # noqa: BLE001 - pandas could not compare: equals() decides
        if not ref.equals(sub):
            raise Mismatch(f"{kind.__name__} not equal") from None


def _plain(*values: Any) -> tuple[Any, ...]:
    return values  # pandas' assert functions each take one kind; the loop above matched it


def _take_names(ref: Any, sub: Any) -> Any:
    import pandas as pd

    if isinstance(ref, pd.DataFrame):
        if set(ref.columns) == set(sub.columns):
            sub = sub[list(ref.columns)]
        if sub.index.shape == ref.index.shape:
            sub = sub.rename_axis(ref.index.names)
        if len(sub.columns) == len(ref.columns):
            sub.columns = ref.columns
    elif isinstance(ref, pd.Series):
        if sub.index.shape == ref.index.shape:
            sub = sub.rename_axis(ref.index.names)
        sub = sub.rename(ref.name)
    return sub


def _drop_order(ref: Any, sub: Any, sort: bool) -> tuple[Any, Any]:
    import pandas as pd

    if isinstance(ref, pd.DataFrame):
        columns = list(ref.columns)
        if set(columns) != set(sub.columns):
            raise Mismatch(f"Columns mismatch: {columns} vs. {list(sub.columns)}")
        ref, sub = ref.reset_index(drop=True), sub[columns].reset_index(drop=True)
        if sort:
            ref = ref.sort_values(by=columns).reset_index(drop=True)
            sub = sub.sort_values(by=columns).reset_index(drop=True)
    elif isinstance(ref, pd.Series):
        ref, sub = ref.reset_index(drop=True), sub.reset_index(drop=True)
        if sort:
            try:
                ref, sub = ref.sort_values().reset_index(drop=True), sub.sort_values().reset_index(drop=True)
            except TypeError:
                pass
    return ref, sub


def _containers(ref: Any, sub: Any, config: dict[str, Any]) -> None:
    if isinstance(ref, (list, tuple)) and isinstance(sub, (list, tuple)):
        if len(ref) != len(sub):
            raise Mismatch(f"Length mismatch: {len(ref)} vs. {len(sub)}")
        if config["ignore_order"]:
            ref, sub = _sorted(ref), _sorted(sub)
        for i, (a, b) in enumerate(zip(ref, sub)):
            _element(f"Element {i}", a, b, config)
    elif isinstance(ref, dict) and isinstance(sub, dict):
        if config["ignore_index"]:
            if len(ref) != len(sub):
                raise Mismatch(f"Length mismatch: {len(ref)} vs. {len(sub)}")
            for (key, a), b in zip(ref.items(), sub.values()):
                _element(f"Element {key}", a, b, config)
        else:
            if sorted(map(str, ref)) != sorted(map(str, sub)) or set(ref) != set(sub):
                raise Mismatch(f"Keys mismatch: {list(ref)} vs. {list(sub)}")
            for key in ref:
                _element(f"Element {key}", ref[key], sub[key], config)
    elif isinstance(ref, set) and isinstance(sub, set):
        if ref != sub:
            raise Mismatch(f"Set not equal: {_short(ref)} vs. {_short(sub)}")
    else:
        raise Mismatch(f"Mismatched type: {type(ref).__name__}, {type(sub).__name__}")


def _element(where: str, a: Any, b: Any, config: dict[str, Any]) -> None:
    try:
        same(a, b, config)
    except Mismatch as exc:
        raise Mismatch(f"{where} not equal: {exc}") from None


def _sorted(values: Any) -> list[Any]:
    try:
        return sorted(values, key=lambda x: (str(type(x)), x))
    except TypeError:
        return list(values)


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 120 else text[:117] + "..."


def comparison(options: Any) -> Callable[[Any, Any], None]:
    """A comparison from DSEval's ``compare_fn`` settings: options, or the source of a function."""
    if isinstance(options, dict) and "compare_fn" in options:
        options = options["compare_fn"]
    if isinstance(options, str):
        space = benchmark_namespace()
        exec(compile(options, "<compare_fn>", "exec"), space)
        custom = space["compare_fn"]

        def compare(ref: Any, sub: Any) -> None:
            outcome = custom(ref, sub)
            if not outcome["match"]:
                raise Mismatch(outcome.get("reason") or "the benchmark's compare_fn says they differ")

        return compare
    return matcher(options if isinstance(options, dict) else None)


def benchmark_namespace() -> dict[str, Any]:
    """Where DSEval runs a problem set's own helper code (test cases, compare functions): pd, np, random."""
    import random

    import numpy
    import pandas

    return {"pd": pandas, "np": numpy, "random": random}
