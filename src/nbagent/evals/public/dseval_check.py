"""The check of a DSEval problem set: every question's validator, on the agent's answer cells, in one kernel.

As DSEval evaluates: one namespace for the whole set (the kernel), advanced by the reference code
of every section in order; for each question, the agent's answer runs in a copy of the namespace as
it stood before the question's reference, and the validator compares the two runs (the result of
the last expression, printed output, the namespace's changes and chosen variables). So a wrong
answer never spoils the questions after it, and each question is judged on its own.

The agent answers question N in the set's notebook, in code cells after one whose first line is
``# QN`` (up to the next such marker, or a ``# given`` cell: code the set hands over between questions). Run by ``nbagent.evals.runner``'s process model: ``python -P
-m nbagent.evals.public.dseval_check SET NOTEBOOK RESULT`` with the finished workspace as working
directory; the result file holds ``passed``, ``reason`` and ``parts`` (one per question).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import json
import re
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable

from .dseval_format import ProblemSet, Section, read_problem_set
from .dseval_match import Mismatch, comparison, matcher
from .dseval_table import table_test

MARKER = re.compile(r"^\s*#\s*(?:Q(\d+)\b|given\b)", re.I)
"""``# QN`` starts question N's answer; ``# given`` starts code the set hands over (no answer's part)."""
QUESTION_TIME_LIMIT = 120
"""Seconds one run of a question's code may take (DSEval's own per-question limits, measured on its
machine, are not applied: a slow answer here fails only past this)."""
TEMPLATES = {"empty": {}, "basic": {"crash": None}, "intact": {"crash": None, "namespace_intact": None},
             "comparison": {"crash": None, "namespace_intact": None, "result": None}}


class Run(dict):
    """What one execution left: ``result`` (the last expression's value), ``stream``, ``error``,
    ``namespace`` and ``diff`` (name -> added, updated, replaced, deleted), ``source``."""


def answers(notebook_path: Path) -> dict[int, str]:
    """Question number -> the agent's code for it (the marked cells, joined)."""
    import nbformat

    nb = nbformat.read(str(notebook_path), as_version=4)
    found: dict[int, list[str]] = {}
    current: int | None = None
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        marked = MARKER.match(cell.source)
        if marked:
            current = int(marked.group(1)) if marked.group(1) else None
            if current is not None:
                found[current] = []  # a later cell marked the same replaces an earlier one
        if current is not None:
            found[current].append(cell.source)
    return {n: "\n\n".join(sources) for n, sources in found.items()}


def execute(code: str, namespace: dict[str, Any]) -> Run:
    """Run ``code`` in ``namespace`` as a notebook cell: the last expression's value is the result."""
    before, ids = copy_namespace(namespace), {k: id(v) for k, v in namespace.items()}
    out, result, error = io.StringIO(), None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), _time_limit(QUESTION_TIME_LIMIT):
        try:
            tree = ast.parse(code)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<cell>", "exec"), namespace)
            if isinstance(last, ast.Expr):
                result = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
        except Exception as exc:  # noqa: BLE001 - the code's failure is what the validator judges
            error = f"{type(exc).__name__}: {exc}"
            traceback.clear_frames(exc.__traceback__)
    return Run(result=result, stream=out.getvalue(), error=error, namespace=namespace,
               diff=namespace_diff(namespace, before, ids), source=code)


@contextlib.contextmanager
def _time_limit(seconds: int):
    def stop(*_: Any) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def copy_namespace(namespace: dict[str, Any]) -> dict[str, Any]:
    """A fork of the kernel's namespace: values deep-copied, modules, functions and files shared."""
    shared = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, io.IOBase)
    fork = {}
    for name, value in namespace.items():
        if name == "__builtins__" or isinstance(value, shared):
            fork[name] = value
            continue
        try:
            fork[name] = copy.deepcopy(value)
        except Exception:  # noqa: BLE001 - as DSEval: a shallow copy, else the object itself
            try:
                fork[name] = copy.copy(value)
            except Exception:  # noqa: BLE001
                fork[name] = value
    return fork


def namespace_diff(now: dict[str, Any], before: dict[str, Any], ids: dict[str, int]) -> dict[str, str]:
    diff = {}
    for name, value in now.items():
        if name in ("__builtins__", "__warningregistry__"):
            continue
        if name not in before:
            diff[name] = "added"
        elif id(value) != ids[name]:
            diff[name] = "replaced"
        else:
            try:
                matcher()(before[name], value)
            except Exception:  # noqa: BLE001 - Mismatch, or values that cannot be compared
                diff[name] = "updated"
    diff.update({name: "deleted" for name in before if name not in now})
    return diff


def validator(config: dict[str, Any] | None) -> Callable[[Run, Run], None]:
    """The question's validator (DSEval's ``validator:`` settings on its template, comparison by
    default): raises Mismatch with the reason when the answer is not correct."""
    config = copy.deepcopy(config or {})
    template = config.pop("template", "comparison")
    merged = _merge(copy.deepcopy(TEMPLATES[template]), config)
    return _all([_one(kind, options) for kind, options in merged.items()])


def _merge(base: Any, user: Any) -> Any:
    if isinstance(base, dict) and isinstance(user, dict):
        for key, value in user.items():
            base[key] = _merge(base[key], value) if key in base else value
        return base
    return user


def _all(checks: list[Callable[[Run, Run], None]]) -> Callable[[Run, Run], None]:
    def check(ref: Run, sub: Run) -> None:
        for one in checks:
            one(ref, sub)

    return check


def _any(checks: list[Callable[[Run, Run], None]]) -> Callable[[Run, Run], None]:
    def check(ref: Run, sub: Run) -> None:
        reasons = []
        for one in checks:
            try:
                return one(ref, sub)
            except Mismatch as exc:
                reasons.append(str(exc))
        raise Mismatch(" / ".join(reasons))

    return check


def _one(kind: str, options: Any) -> Callable[[Run, Run], None]:
    options = {} if options is None else options
    if kind == "and":
        return _all([_one(k, v) for k, v in options.items()])
    if kind == "or":
        return _any([_one(k, v) for k, v in options.items()])
    if kind == "crash":
        return _crash
    if kind == "namespace_intact":
        return _intact(**options)
    if kind == "result":
        return _result(comparison(options))
    if kind == "namespace_check":
        return _variables({name: comparison(o) for name, o in options.items()})
    if kind == "stream":
        return _stream
    if kind == "table_test":
        return table_test(**options)
    raise ValueError(f"validator {kind!r} is not supported by nbagent's DSEval check")


def _crash(ref: Run, sub: Run) -> None:
    if sub["error"] is not None:
        raise Mismatch(f"the answer raised {sub['error']}")


def _intact(addition: Any = True, update: Any = None, replacement: Any = None, deletion: Any = None,
            treat_replacement_as_update: bool | None = None) -> Callable[[Run, Run], None]:
    merge = replacement is None if treat_replacement_as_update is None else treat_replacement_as_update

    def check(ref: Run, sub: Run) -> None:
        def kinds(diff: dict[str, str]) -> dict[str, str]:
            return {n: ("updated" if merge and d == "replaced" else d) for n, d in diff.items()}

        expected, got = kinds(ref["diff"]), kinds(sub["diff"])
        allowed = {"added": addition, "updated": update, "replaced": replacement, "deleted": deletion}
        for kind in ("updated", "replaced", "deleted"):
            if allowed[kind] is None:
                allowed[kind] = [n for n, d in expected.items() if d == kind]
        for name, kind in got.items():
            rule = allowed[kind]
            if rule is False or (isinstance(rule, list) and name not in rule):
                raise Mismatch(f"Unexpected variable {kind}: {name}")

    return check


def _result(compare: Callable[[Any, Any], None]) -> Callable[[Run, Run], None]:
    def check(ref: Run, sub: Run) -> None:
        if ref["result"] is None:
            return  # the reference shows nothing: any result is fine
        if sub["result"] is None:
            raise Mismatch("Output is missing: the answer's last line shows no value")
        compare(ref["result"], sub["result"])

    return check


def _variables(names: dict[str, Callable[[Any, Any], None]]) -> Callable[[Run, Run], None]:
    def check(ref: Run, sub: Run) -> None:
        for name, compare in names.items():
            if name not in ref["namespace"]:
                raise ValueError(f"the reference defines no variable {name!r}")
            if name not in sub["namespace"]:
                raise Mismatch(f"Variable {name} not found in submission.")
            try:
                compare(ref["namespace"][name], sub["namespace"][name])
            except Mismatch as exc:
                raise Mismatch(f"Variable {name}: {exc}") from None

    return check


def _stream(ref: Run, sub: Run) -> None:
    if ref["stream"] != sub["stream"]:
        raise Mismatch(f"Printed output differs: expected {ref['stream'][:200]!r}, got {sub['stream'][:200]!r}")


def check_set(problems: ProblemSet, given: dict[int, str]) -> list[dict[str, Any]]:
    """One part per question: ``{"name": "q3", "passed", "reason"}``."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    parts: list[dict[str, Any]] = []
    for section in problems.sections:
        if not section.is_question:
            _reference(section, namespace)
            continue
        number = len(parts) + 1
        fork = copy_namespace(namespace)
        ref = _reference(section, namespace)
        parts.append(_judge(number, section, ref, given.get(number), fork))
    return parts


def _reference(section: Section, namespace: dict[str, Any]) -> Run:
    run = execute(section.code, namespace)
    if run["error"] is not None:  # the benchmark's own code must run: else nothing after it means anything
        raise RuntimeError(f"the reference code failed here: {run['error']}")
    return run


def _judge(number: int, section: Section, ref: Run, code: str | None, fork: dict[str, Any]) -> dict[str, Any]:
    part = {"name": f"q{number}", "passed": False, "reason": ""}
    if code is None:
        part["reason"] = f"no answer: no code cell starts with '# Q{number}'"
        return part
    sub = execute(code, fork)
    try:
        validator(section.validator)(ref, sub)
        part["passed"] = True
    except (Mismatch, ValueError) as exc:
        part["reason"] = " ".join(str(exc).split())[:400]
    return part


def main(argv: list[str] | None = None) -> int:
    set_file, notebook, out = (argv if argv is not None else sys.argv[1:])[:3]
    from ...workspace.lean_imports import without_iri_format_check

    without_iri_format_check()  # as nbagent.evals.runner
    problems = read_problem_set(Path(set_file))
    try:
        given = answers(Path(notebook)) if Path(notebook).is_file() else {}
        parts = check_set(problems, given)
        failed = [p for p in parts if not p["passed"]]
        result = {"passed": not failed, "parts": parts,
                  "reason": "; ".join(f"{p['name']}: {p['reason']}" for p in failed)[:500]}
    except Exception as exc:  # noqa: BLE001 - a check that cannot run fails, saying why
        result = {"passed": False, "parts": [], "reason": f"{type(exc).__name__}: {exc}"[:500]}
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
