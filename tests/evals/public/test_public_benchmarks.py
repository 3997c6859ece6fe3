"""`nbagent eval dseval` and `nbagent eval dabstep` end to end on the scripted model: the benchmarks'
own checks pass the reference answers and fail wrong ones, row by row, beside the published figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from nbagent.store.sessions import SessionStore
from nbagent.testing import ScriptedServer

from .models import DABSTEP, DSEVAL, dabstep_model, dseval_model

pytestmark = [pytest.mark.integration, pytest.mark.process, pytest.mark.kernel]  # the CLI, checks' kernels


def _cli(server: ScriptedServer, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NBAGENT_LOCAL": "off", "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "nbagent.cli", "eval", *args, "--base-url", server.url],
                          env=env, capture_output=True, text=True, timeout=300)


def test_dseval_problem_sets_run_one_turn_per_question_and_each_question_is_judged(tmp_path):
    with ScriptedServer(responder=dseval_model) as server:
        done = _cli(server, "dseval", "--data", str(DSEVAL), "--tasks", "03-*,01-*", "--model", "dseval-ref",
                    "--model", "dseval-half", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    df = pd.read_csv(tmp_path / "run" / "results.csv")
    ref, half = df[df["model"] == "dseval-ref"], df[df["model"] == "dseval-half"]
    assert len(ref) == 12 and ref["passed"].all(), ref["reason"].tolist()  # 2 sets of 6 questions
    assert set(ref["task"]) >= {"03-grouping-alcohol-consumption/q1", "01-getting-knowing-your-data-occupation/q6"}
    assert (ref["end"] == "done").all() and (ref["tool_calls"] == 1).all() and (ref["steps"] == 2).all()
    odd = half["task"].str[-1].astype(int) % 2 == 1
    assert half[odd]["passed"].all() and not half[~odd]["passed"].any()
    wrong = half.set_index("task")["reason"]
    assert "check failed: Wrong type: str, int" in wrong["03-grouping-alcohol-consumption/q2"]  # idxmax is a str
    assert "dseval-ref: 12 of 12 passed (100%" in done.stdout and "dseval-half: 6 of 12 passed (50%" in done.stdout
    assert "published: DSEval Exercise v1: 79.1%" in done.stdout
    assert "not like for like: this run asked 12 of its 187 questions" in done.stdout
    with SessionStore(tmp_path / "run") as store:  # one session per set and model: six prompts in it
        prompts = [m for m in store.messages(ref["session_id"].iloc[0]) if m["message"]["role"] == "user"]
    assert len(prompts) == 6 and "Question 6 (# Q6)" in prompts[-1]["message"]["content"]
    report = (tmp_path / "run" / "report.html").read_text()
    assert "Published figures" in report and "CoML agent with gpt-35-turbo" in report
    assert "local copy" in json.loads((tmp_path / "run" / "run.json").read_text())["data"]


def test_dabstep_dev_questions_are_notebooks_that_must_rerun_and_print_the_answer(tmp_path):
    with ScriptedServer(responder=dabstep_model) as server:
        done = _cli(server, "dabstep", "--data", str(DABSTEP), "--model", "dabstep-ref", "--model", "dabstep-wrong",
                    "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    df = pd.read_csv(tmp_path / "run" / "results.csv")
    assert sorted(set(df["task"])) == ["task-1", "task-49", "task-5"]  # 1273 has no answer: left out
    ref, wrong = df[df["model"] == "dabstep-ref"], df[df["model"] == "dabstep-wrong"]
    assert ref["passed"].all(), ref["reason"].tolist()
    assert not wrong["passed"].any()
    reasons = wrong.set_index("task")["reason"]
    assert "printed '59', which DABStep's scorer does not accept" in reasons["task-1"]
    assert "printed 'ES'" in reasons["task-5"]
    assert "does not re-run clean" in reasons["task-49"] and "NameError" in reasons["task-49"]
    assert "published: DABStep default: hard questions: 14.5%" in done.stdout
    assert "not like for like: it was measured on default: hard questions, this run on dev" in done.stdout
