"""The eval's figures (intervals, comparisons) on known inputs, the task format's errors, and the report in a notebook."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nbagent.errors import ConfigError
from nbagent.evals import load_suite
from nbagent.evals.report import EvalReport, body_html
from nbagent.evals.stats import comparisons, summary, t975, wilson


def frame(results: dict[str, list[list[bool]]]) -> pd.DataFrame:
    """Rows for {model: [run 1's passes by task, run 2's, ...]}."""
    rows = []
    for model, runs in results.items():
        for run, passes in enumerate(runs, 1):
            for i, passed in enumerate(passes):
                rows.append({"task": f"t{i}", "model": model, "run": run, "passed": passed, "reason": "" if passed
                             else "check failed: <script>alert(1)</script>", "steps": 2, "tool_calls": 1,
                             "input_tokens": 100, "cached_tokens": 40, "output_tokens": 10, "cost": 0.01,
                             "seconds": 3.0, "session_id": f"s{model}{run}{i}", "config": ""})
    df = pd.DataFrame(rows)
    df.attrs.update(suite="demo", suite_version="1", suite_digest="abc", tasks=["t0"], repeat=len(runs),
                    out="/tmp/out", arms=[{"label": m, "model": m, "endpoint": "http://x/v1", "offline": m == "small"}
                                          for m in results])
    return df


def test_wilson_and_t_match_their_tables():
    low, high = wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    assert wilson(0, 0) == (0.0, 1.0)
    assert t975(2) == 4.303 and t975(11) == 2.228 and t975(500) == 1.96 and math.isinf(t975(0))


def test_the_interval_is_over_runs_when_there_are_several():
    half_right, three_of_four = [True, True, False, False], [True, True, True, False]
    df = frame({"a": [half_right, three_of_four, half_right, three_of_four]})
    (row,) = summary(df).itertuples()
    assert row.pass_rate == pytest.approx(0.625) and row.interval == "over 4 runs"
    half = 3.182 * row.run_sd / 2  # t(3) * sd / sqrt(4)
    assert row.run_sd == pytest.approx(0.1443, abs=1e-4)
    assert (row.ci_low, row.ci_high) == (pytest.approx(0.625 - half), pytest.approx(0.625 + half))
    assert row.cost_per_solved == pytest.approx(0.16 / 10) and row.seconds_per_solved == pytest.approx(48 / 10)
    one = summary(frame({"a": [[True, False, True, True]]})).iloc[0]
    assert one["interval"].startswith("over tasks") and math.isnan(one["run_sd"])


def test_a_difference_is_called_real_only_beyond_the_spread():
    steady = frame({"a": [[True, False] * 5] * 3, "b": [[True] * 10] * 3})
    (real,) = comparisons(steady).itertuples()
    assert real.difference == pytest.approx(0.5) and real.beyond_spread is True

    noisy = frame({"a": [[True] * 5 + [False] * 5, [True] * 8 + [False] * 2, [True] * 2 + [False] * 8],
                   "b": [[True] * 6 + [False] * 4, [True] * 3 + [False] * 7, [True] * 9 + [False]]})
    (unclear,) = comparisons(noisy).itertuples()
    assert unclear.beyond_spread is False and unclear.verdict.startswith("within the run-to-run spread")

    (unknown,) = comparisons(frame({"a": [[True, False]], "b": [[True, True]]})).itertuples()
    assert unknown.beyond_spread is None and "repeat >= 2" in unknown.verdict


def test_the_report_escapes_what_it_shows_and_draws_its_plot():
    html = body_html(frame({"small": [[True, False]], "big": [[True, True]]}), {"suite": "<b>demo</b>", "arms": [
        {"label": "small", "model": "smollm2", "endpoint": "offline", "offline": True}]}, link_sessions=True)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;demo&lt;/b&gt;" in html and "<svg" in html and "its score is a floor" in html
    assert "href='sessions/ssmall11.txt'" in html


def test_in_a_notebook_the_report_renders_in_the_cell():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from nbagent.evals import report
    from nbagent.jupyter.widgets import eval_report  # what nbagent.eval loads inside a kernel

    shell = InteractiveShell.instance()
    try:
        with capture_output() as captured:
            report.show(EvalReport(frame({"a": [[True, False]]})))
    finally:
        InteractiveShell.clear_instance()
    assert eval_report.show_in_cell in report._DISPLAYS and shell is not None
    (shown,) = captured.outputs
    assert "<svg" in shown.data["text/html"] and "Pass rate" in shown.data["text/html"]


def write_task(folder, toml: str, check: bool = True, workspace: bool = True):
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    if check:
        (folder / "check.py").write_text("assert True\n")
    if workspace:
        (folder / "workspace").mkdir()


@pytest.mark.parametrize("toml, check, workspace, message", [
    ('prompt = ""', True, True, "'prompt' must be a non-empty string"),
    ('prompt = "x"\n[settings]\napproval = "ask"', True, True, "approval must be one of"),
    ('prompt = "x"\n[settings]\nmax_step = 3', True, True, "unknown setting 'max_step'"),
    ('prompt = "x"\n[settings]\ntime_limit = -1', True, True, "time_limit must be a positive number"),
    ('prompt = "x"', False, True, "has no check.py"),
    ('prompt = "x"', True, False, "has no workspace/ folder"),
    ('prompt = "x', True, True, "cannot be read"),
])
def test_a_bad_task_is_refused_with_what_is_wrong(tmp_path, toml, check, workspace, message):
    write_task(tmp_path / "suite" / "bad", toml, check, workspace)
    with pytest.raises(ConfigError, match=message):
        load_suite(tmp_path / "suite")


def test_a_yaml_task_and_a_single_task_folder_load(tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "task.yaml").write_text("prompt: Say hi\ntags: [demo]\nsettings:\n  toolsets: [core, notebook]\n")
    (folder / "check.py").write_text("assert True\n")
    (folder / "workspace").mkdir()
    suite = load_suite(folder)
    (task,) = suite.tasks
    assert (task.prompt, task.tags, task.settings) == ("Say hi", ("demo",), {"toolsets": "core,notebook"})
    assert suite.select("dem*").tasks == suite.tasks
    with pytest.raises(ConfigError, match="no task of suite"):
        suite.select("nothing")
