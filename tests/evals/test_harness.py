"""nbagent.eval end to end on the scripted OpenAI-compatible server: every task a row, whatever happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from tests.pty_run import run_on_a_terminal

import nbagent
from nbagent.evals import COLUMNS
from nbagent.store.sessions import SessionStore
from nbagent.testing import Call, Reply, ScriptedServer

from .conftest import TASKS


@pytest.mark.process
def test_a_pass_a_failed_check_a_timeout_and_an_agent_error_are_each_a_row(model_options, tmp_path):
    df = nbagent.eval(TASKS, models=["scripted-good"], out=tmp_path / "run", progress=False, **model_options)
    assert list(df.columns) == COLUMNS
    rows = df.set_index("task")
    assert sorted(rows.index) == ["model-fails", "says-it-did", "times-out", "writes-answer"]
    assert rows.loc["writes-answer", "passed"] and rows.loc["writes-answer", "reason"] == ""
    assert rows.loc["writes-answer", "end"] == "done" and rows.loc["writes-answer", "tool_calls"] == 1
    assert rows.loc["writes-answer", "steps"] == 2 and rows.loc["writes-answer", "input_tokens"] > 0

    lazy = rows.loc["says-it-did"]  # the model's own answer says done: only the check counts
    assert not lazy["passed"] and lazy["end"] == "done"
    assert lazy["reason"] == "check failed: test_the_total_is_written: total.txt was not written"

    slow = rows.loc["times-out"]
    assert not slow["passed"] and slow["end"] == "timeout"
    assert slow["reason"].startswith("timed out after 2 s; check failed: check.py: done.txt was not written")
    assert slow["seconds"] < 20

    failed = rows.loc["model-fails"]
    assert not failed["passed"] and failed["end"] == "error"
    assert "scripted endpoint is down" in failed["reason"] and "check failed: test_written" in failed["reason"]

    # every run has a session in the run's folder, and the report links the failures to them
    out = Path(df.attrs["out"])
    with SessionStore(out) as store:
        for sid in df["session_id"]:
            assert store.messages(sid)
    report = (out / "report.html").read_text()
    assert "harness (version 1" in report and "scripted-good" in report and model_options["base_url"] in report
    assert "measures the harness, not an agent" in report
    assert f"sessions/{lazy['session_id']}.txt" in report
    assert f"nbagent sessions show {lazy['session_id']} -w {out}" in report
    transcript = (out / "sessions" / f"{lazy['session_id']}.txt").read_text()
    assert "Write the total (7) into total.txt." in transcript and "Done: the file is written." in transcript
    saved = pd.read_csv(out / "results.csv")
    assert len(saved) == 4 and saved["passed"].sum() == 1


@pytest.mark.process
def test_two_models_side_by_side_over_repeats(model_options, tmp_path):
    df = nbagent.eval(TASKS, models=["scripted-good", "scripted-lazy"], repeat=2, tasks="writes-answer,says-*",
                      out=tmp_path / "cmp", progress=False, concurrency=4, **model_options)
    assert len(df) == 2 * 2 * 2 and set(df["run"]) == {1, 2}
    rates = df.groupby("model")["passed"].mean()
    assert rates["scripted-good"] == 0.5 and rates["scripted-lazy"] == 0.0

    from nbagent.evals.stats import comparisons, summary

    table = summary(df).set_index("model")
    assert table.loc["scripted-good", "interval"] == "over 2 runs" and table.loc["scripted-good", "run_sd"] == 0
    (cmp,) = comparisons(df).itertuples()
    assert (cmp.baseline, cmp.model, cmp.difference) == ("scripted-good", "scripted-lazy", -0.5)
    assert cmp.beyond_spread is True  # the same every run: no spread at all
    report = (Path(df.attrs["out"]) / "report.html").read_text()
    assert "scripted-lazy vs scripted-good" in report and "larger than the run-to-run spread" in report


@pytest.mark.process
def test_the_cli_runs_a_suite_and_writes_the_report(model_server, tmp_path):
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NBAGENT_LOCAL": "off", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "nbagent.cli", "eval", str(TASKS), "--model", "scripted-good",
                           "--base-url", model_server.url, "--tasks", "writes-*", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "scripted-good: 1 of 1 passed (100%" in done.stdout
    assert (out / "report.html").is_file() and len(pd.read_csv(out / "results.csv")) == 1

    compared = subprocess.run([sys.executable, "-m", "nbagent.cli", "eval", str(TASKS), "-m", "scripted-good",
                               "--base-url", model_server.url, "--tasks", "writes-*", "--out", str(tmp_path / "cfg"),
                               "--config", "notebook:toolsets=core,notebook,max-steps=3", "--config", "core:toolsets=core"],
                              env=env, capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    assert "scripted-good · notebook: 1 of 1 passed" in compared.stdout
    assert "scripted-good · core: 1 of 1 passed" in compared.stdout
    arms = json.loads((tmp_path / "cfg" / "run.json").read_text())["arms"]
    assert arms[0]["options"]["toolsets"] == "core,notebook" and arms[0]["options"]["max_steps"] == "3"

    bad = subprocess.run([sys.executable, "-m", "nbagent.cli", "eval", str(TASKS), "--tasks", "nothing-*",
                          "--out", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no task of suite 'harness' matches 'nothing-*'" in bad.stderr


def reference_model(body: dict):
    """Plays each built-in task's reference: writes its solution files with write_file, then answers
    with its solution.md. What a model that does the work perfectly would leave."""
    from nbagent.evals import load_suite

    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    task = next(t for t in load_suite().tasks if t.prompt == prompt)
    files = sorted(p for p in task.solution.rglob("*") if p.is_file()) if task.solution.is_dir() else []
    if messages[-1]["role"] == "user" and files:
        return Reply(tool_calls=[Call("write_file", {"path": p.relative_to(task.solution).as_posix(),
                                                     "content": p.read_text()}) for p in files])
    return Reply(text=task.solution_answer or "Done.")


@pytest.mark.process
def test_a_model_that_does_the_work_passes_built_in_tasks(tmp_path):
    """Through the whole harness: the agent's tools write the notebook, the check executes it."""
    with ScriptedServer(responder=reference_model) as server:
        df = nbagent.eval(models=["reference"], tasks="fix-name-error,read-only-answer-question,rename-dataframe",
                          base_url=server.url, api_key="sk-test", max_retries=0, out=tmp_path / "ref",
                          progress=False)
    assert df["passed"].all(), df["reason"].tolist()
    assert df.set_index("task").loc["fix-name-error", "tool_calls"] == 1
    assert (df.attrs["suite"], df.attrs["suite_version"]) == ("nbagent notebook tasks", "1")


@pytest.mark.integration
def test_tasks_and_their_checks_run_on_dask_workers(model_options, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        df = nbagent.eval(TASKS, models=["scripted-good"], tasks="writes-answer,says-it-did", client=client,
                          out=tmp_path / "dask", progress=False, **model_options)
    rows = df.set_index("task")
    assert rows.loc["writes-answer", "passed"] and not rows.loc["says-it-did", "passed"]
    assert "total.txt was not written" in rows.loc["says-it-did", "reason"]
    assert df["error"].isna().all()  # the spec and its check hook travelled to the worker and back
    with SessionStore(Path(df.attrs["out"])) as store:  # the sessions came back to the run's folder
        assert all(store.messages(sid) for sid in df["session_id"])


NOTEBOOK_EDITS = {
    "change the filter cell": Call("notebook_edit", {"path": "shipments.ipynb", "cell_id": "filter",
                                                     "source": "print([s for s in shipments if s > 10])"}),
    "add a markdown cell": Call("notebook_insert", {"path": "shipments.ipynb", "cell_type": "markdown",
                                                    "source": "## Filter", "after_cell_id": "data"}),
    "delete the cell": Call("notebook_delete", {"path": "shipments.ipynb", "cell_id": "sign"}),
}


def notebook_tools_model(body: dict):
    """Does the keep-cells tasks with nbagent's own notebook tools: read, then one edit, then done."""
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    done = [m for m in messages if m["role"] == "tool"]
    if not done:
        return Reply(tool_calls=[Call("notebook_read", {"path": "shipments.ipynb"})])
    if len(done) == 1:
        return Reply(tool_calls=[next(c for words, c in NOTEBOOK_EDITS.items() if words in prompt)])
    return Reply(text="Done.")


@pytest.mark.process
def test_the_notebook_tools_own_edits_pass_the_keep_cells_checks(tmp_path):
    """The checks that other cells stay as they were (outputs, metadata, order) are fair to the
    agent's notebook tools: one edit, insert or delete by id keeps the rest byte for byte."""
    with ScriptedServer(responder=notebook_tools_model) as server:
        df = nbagent.eval(models=["notebook-tools"], tasks="keep-cells-*", base_url=server.url, api_key="sk-test",
                          max_retries=0, out=tmp_path / "nb", progress=False)
    assert len(df) == 3 and df["passed"].all(), df["reason"].tolist()
    assert (df["tool_calls"] == 2).all()


@pytest.mark.process
def test_a_file_the_agent_wrote_cannot_stand_in_for_the_checks_helpers(tmp_path):
    """An agent that writes its own nbagent/ (or json.py) into the workspace does not get to pass."""
    from nbagent.evals.runner import run_check

    task = TASKS / "writes-answer"
    workspace = tmp_path / "w"
    (workspace / "nbagent" / "evals").mkdir(parents=True)
    for init in ("nbagent/__init__.py", "nbagent/evals/__init__.py"):
        (workspace / init).write_text("")
    (workspace / "nbagent" / "evals" / "checks.py").write_text("raise SystemExit(0)\n")
    (workspace / "pathlib.py").write_text("class Path:\n    def __init__(self, p): pass\n"
                                          "    def read_text(self): return '42'\n")
    result = run_check(task, workspace)
    assert not result["passed"] and "answer.txt" in result["check_reason"]
    (workspace / "answer.txt").write_text("42\n")  # and the workspace's own files are still what it reads
    assert run_check(task, workspace)["passed"]


@pytest.mark.process
def test_a_task_whose_agent_cannot_start_is_a_row_too(model_options, tmp_path):
    df = nbagent.eval(TASKS, models=["scripted-good"], tasks="writes-*,says-*", max_steps=0, out=tmp_path / "bad",
                      progress=False, **model_options)
    assert len(df) == 2 and not df["passed"].any()
    assert df["error"].str.contains("max_steps must be at least 1").all()
    assert df["reason"].str.endswith("the check did not run").all()


@pytest.mark.process
def test_the_cli_on_a_terminal_shows_a_bar_per_task_and_a_summary_and_the_report_reads_right(model_server,
                                                                                             tmp_path):
    """Issue 40, item 14: progress while it runs, one summary line with the report's path at the end; the
    report names the installed jupyter-nbagent's version, labels its token totals and says its interval
    in one sentence."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NBAGENT_LOCAL": "off", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = tmp_path / "tty"
    done, terminal = run_on_a_terminal([sys.executable, "-m", "nbagent.cli", "eval", str(TASKS), "--model",
                                        "scripted-good", "--base-url", model_server.url, "--tasks", "writes-*",
                                        "--out", str(out)], env=env, timeout=120)
    assert done.returncode == 0, terminal
    assert "nbagent eval: 100%" in terminal and "1/1" in terminal and "passed 1, failed 0" in terminal, terminal
    assert "nbagent eval: 1 of 1 task run(s) passed in" in terminal and f"report: {out}/report.html" in terminal
    assert "scripted-good: 1 of 1 passed (100%); 95% interval" in done.stdout
    assert "((" not in done.stdout and "))" not in done.stdout
    report = (out / "report.html").read_text()
    assert f"<th>nbagent</th><td>{nbagent.__version__}</td>" in report, report[:2000]
    assert "tokens in / cached / out, all runs together" in report
    assert "over tasks; one run, so no run-to-run spread" in report and "((" not in report


def test_an_offline_arm_costs_nothing_rather_than_unknown():
    """Issue 40, item 14: a local model's cost is zero, so its cost per solved task is $0, not unknown."""
    from nbagent.evals.report import body_html
    from nbagent.evals.run import Arm, _eval_row

    arm = Arm(label="smollm2-135m-instruct", model=None, config="")
    row = {"passed": True, "reason": "done", "steps": 1, "input_tokens": 240, "output_tokens": 20, "cost": None,
           "seconds": 3.0, "session_id": "s"}
    fake_task = type("T", (), {"name": "t", "time_limit": 60.0, "tags": ()})()
    offline = _eval_row((arm, 1, fake_task), row, None, {arm.label})
    hosted = _eval_row((arm, 1, fake_task), row, None, set())
    assert offline["cost"] == 0.0 and hosted["cost"] is None
    frame = pd.DataFrame([offline], columns=COLUMNS)
    assert "$0.0000" in body_html(frame, {"suite": "s", "tasks": ["t"]}, link_sessions=False)
