"""DSEval's table tests: a function the answer defines, called on every test case as the reference's is.

A ``table_test`` validator (LeetCode's problem sets) names the function and its test cases: argument
lists (a YAML list is the tuple of arguments) or dicts of them, code in ```` ``` ```` defining
``_test_case`` or ``_generate()``, a `` `expression` ``, or ``//`` (the case before, generated again
with the next random seed). The output is compared with the reference's, and the arguments after the
call too (an answer must not change what it was given, unless ``input_checker: false``).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from .dseval_match import Mismatch, benchmark_namespace, comparison


def table_test(function_name: str, test_cases: list[Any], input_validator: Any = None,
                input_checker: Any = None, output_checker: Any = None) -> Callable[[Any, Any], None]:
    """The answer's function called on every test case as the reference's is: the same output, and the
    arguments left as the reference leaves them (unless ``input_checker: false``)."""
    cases = _test_cases(test_cases)
    inputs = None if input_checker is False else comparison(None if input_checker is True else input_checker)
    outputs = comparison(output_checker)

    def check(ref: Any, sub: Any) -> None:
        if function_name not in ref["namespace"]:
            raise ValueError(f"the reference defines no function {function_name!r}")
        if function_name not in sub["namespace"]:
            raise Mismatch(f"Function {function_name} not found in submission.")
        for case in cases:
            expected_args, got_args = copy.deepcopy(case), copy.deepcopy(case)
            expected = _call(ref["namespace"][function_name], expected_args)
            try:
                got = _call(sub["namespace"][function_name], got_args)
            except Exception as exc:  # noqa: BLE001 - the answer's failure is the verdict
                raise Mismatch(f"Function {function_name} raised {type(exc).__name__}: {exc} on test case "
                               f"{_case(case)}") from None
            try:
                if inputs is not None:
                    inputs(expected_args, got_args)
                outputs(expected, got)
            except Mismatch as exc:
                raise Mismatch(f"Function {function_name} on test case {_case(case)}: {exc}") from None

    return check


def _test_cases(cases: list[Any]) -> list[Any]:
    """The test cases as arguments (see the module docstring)."""
    import random

    import numpy as np

    out, last = [], None
    for number, case in enumerate(cases):
        random.seed(number)
        np.random.seed(number)
        if case == "//":
            if last is None:
                raise ValueError("a '//' test case repeats none")
            case = last
        else:
            last = case
        out.append(_case_value(case, top=True))
    return out


def _case_value(value: Any, top: bool = False) -> Any:
    if isinstance(value, tuple) or (top and isinstance(value, list)):
        return tuple(_case_value(v) for v in value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("```\n") and text.endswith("```"):
            space = benchmark_namespace()
            exec(compile(text[4:-3], "<test case>", "exec"), space)
            value = space["_test_case"] if "_test_case" in space else space["_generate"]()
        elif text.startswith("`") and text.endswith("`"):
            value = eval(compile(text[1:-1], "<test case>", "eval"), benchmark_namespace())
    return value


def _call(function: Any, args: Any) -> Any:
    return function(**args) if isinstance(args, dict) else function(*args)


def _case(case: Any) -> str:
    text = " ".join(repr(case).split())
    return text if len(text) <= 120 else text[:117] + "..."
