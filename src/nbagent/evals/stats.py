"""The figures of an eval: pass rate per model with a confidence interval, cost and time per solved task, comparisons.

With two or more runs the interval is over runs (each run's pass rate is one sample: what changes
from run to run is what the interval is about), with Student's t; with one run it is Wilson's
interval over the tasks, and the report says so. A comparison of two models is the difference of
their mean pass rates, and it is called larger than the run-to-run spread when it exceeds its own
95% interval (Welch's: each side's spread over its runs). The t quantiles are a short table rather
than a scipy dependency for one number.
"""

from __future__ import annotations

import math
from typing import Any

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
"""Two-sided 95% quantiles of Student's t by degrees of freedom (between rows: the next smaller df,
which errs wide)."""


def t975(df: float) -> float:
    if df < 1:
        return math.inf
    below = [k for k in T975 if k <= df]
    return T975[max(below)] if df <= 120 else 1.960


def wilson(passed: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% interval for ``passed`` successes out of ``total``."""
    if total == 0:
        return (0.0, 1.0)
    p = passed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (max(0.0, centre - half), min(1.0, centre + half))


def summary(frame: Any) -> Any:
    """One row per model: runs, tasks, pass rate with its interval, cost and time per solved task."""
    import pandas as pd

    rows = [_summary_row(label, group) for label, group in frame.groupby("model", sort=False)]
    return pd.DataFrame(rows, columns=["model", "runs", "tasks", "passed", "pass_rate", "ci_low", "ci_high",
                                       "interval", "run_sd", "cost", "cost_per_solved", "seconds_per_solved",
                                       "steps_per_task", "input_tokens", "cached_tokens", "output_tokens"])


def _summary_row(label: str, group: Any) -> dict[str, Any]:
    per_run = group.groupby("run")["passed"].mean()
    runs, solved = len(per_run), int(group["passed"].sum())
    rate = float(per_run.mean())
    sd = float(per_run.std(ddof=1)) if runs > 1 else math.nan
    if runs > 1:
        half = t975(runs - 1) * sd / math.sqrt(runs)
        low, high, interval = max(0.0, rate - half), min(1.0, rate + half), f"over {runs} runs"
    else:
        low, high = wilson(solved, len(group))
        interval = "over tasks; one run, so no run-to-run spread"
    costs = group["cost"].dropna()
    cost = float(costs.sum()) if len(costs) else math.nan
    return {"model": label, "runs": runs, "tasks": group["task"].nunique(), "passed": solved, "pass_rate": rate,
            "ci_low": low, "ci_high": high, "interval": interval, "run_sd": sd, "cost": cost,
            "cost_per_solved": _per_solved(cost, solved, len(costs)),
            "seconds_per_solved": float(group["seconds"].sum()) / solved if solved else math.nan,
            "steps_per_task": float(group["steps"].mean()),
            "input_tokens": int(group["input_tokens"].sum()), "cached_tokens": int(group["cached_tokens"].sum()),
            "output_tokens": int(group["output_tokens"].sum())}


def comparisons(frame: Any) -> Any:
    """Every other model against the first: the difference in pass rate, its interval, and whether
    it is larger than the run-to-run spread (None when one run gives no spread to compare with)."""
    import pandas as pd

    labels = list(dict.fromkeys(frame["model"]))
    rates = {label: frame[frame["model"] == label].groupby("run")["passed"].mean() for label in labels}
    rows = [_compare(labels[0], rates[labels[0]], other, rates[other]) for other in labels[1:]]
    return pd.DataFrame(rows, columns=["baseline", "model", "difference", "ci_low", "ci_high", "beyond_spread",
                                       "verdict"])


def _compare(base: str, a: Any, other: str, b: Any) -> dict[str, Any]:
    diff = float(b.mean() - a.mean())
    if len(a) < 2 or len(b) < 2:
        return {"baseline": base, "model": other, "difference": diff, "ci_low": math.nan, "ci_high": math.nan,
                "beyond_spread": None, "verdict": "unknown: one run gives no run-to-run spread (use repeat >= 2)"}
    va, vb = float(a.var(ddof=1)) / len(a), float(b.var(ddof=1)) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        beyond = diff != 0
        low = high = diff
    else:
        # Welch-Satterthwaite degrees of freedom
        df = (va + vb) ** 2 / ((va * va / (len(a) - 1)) + (vb * vb / (len(b) - 1))) if va or vb else 1
        half = t975(df) * se
        low, high = diff - half, diff + half
        beyond = low > 0 or high < 0
    verdict = ("larger than the run-to-run spread" if beyond
               else "within the run-to-run spread: no difference shown")
    return {"baseline": base, "model": other, "difference": diff, "ci_low": low, "ci_high": high,
            "beyond_spread": beyond, "verdict": verdict}


def grid(frame: Any) -> Any:
    """Tasks by models: the share of runs each model passed each task in."""
    return frame.pivot_table(index="task", columns="model", values="passed", aggfunc="mean", sort=False)


def _per_solved(cost: float, solved: int, priced: int) -> float:
    """Cost per solved task: unknown without prices; nothing when nothing was spent (a local model),
    solved or not."""
    if priced and cost == 0:
        return 0.0
    return cost / solved if solved and priced else math.nan
