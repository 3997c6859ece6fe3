"""notebook_check runs a copy of a notebook in a fresh real kernel (nbclient + ipykernel): hidden state,
failing and timed-out cells, changed outputs and execution order are reported; the file and the user's
kernel are untouched and the check's kernel is gone afterwards."""

from __future__ import annotations

import subprocess
import sys
import time

import nbformat
import psutil
import pytest
from tests.pty_run import run_on_a_terminal

from nbagent.testing import Call, Reply
from nbagent.tools.nbcheck import check_notebook, notebook_check
from nbagent.tools.nbstatic import analyse, python_source

pytestmark = pytest.mark.integration
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def code(source: str, count: int | None = None, *outputs) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, execution_count=count, outputs=list(outputs))


def stdout(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def result(text: str, count: int):
    return nbformat.v4.new_output("execute_result", data={"text/plain": text}, execution_count=count)


def write(path, *cells) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    nb.cells = list(cells)
    nbformat.write(nb, path)


def kernels_of_this_process() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if "ipykernel" in " ".join(p.cmdline())}


@pytest.mark.kernel
def test_a_notebook_with_hidden_state_is_caught_and_the_checks_kernel_is_gone_after(ctx, tmp_path):
    # Saved from a live kernel where df_live existed and cell 3 ran before cell 2.
    write(tmp_path / "hidden.ipynb",
          code("x = 1\nprint(x)", 1, stdout("1\n")),
          code("print(df_live + x)", 3, stdout("43\n")),
          code("y = x + 1\ny", 2, result("3", 2)),
          code("class A: pass\nA()", 4, result("<__main__.A at 0x7f00deadbeef>", 4)))
    before_bytes = (tmp_path / "hidden.ipynb").read_bytes()
    kernels_before = kernels_of_this_process()
    text = notebook_check(ctx, "hidden.ipynb", timeout=30)
    assert "ran 4 code cell(s) in a fresh python3 kernel" in text
    assert "NameError: name 'df_live' is not defined" in text
    assert "uses df_live: no cell defines it: it exists only in the live kernel" in text
    assert "\n    -3\n    +2" in text  # y's stored value came from the live kernel's history
    assert "0xADDRESS" not in text and "A at" not in text  # an object's address is not a difference
    assert "comes after cell" in text and "[3] but ran before it" in text
    assert text.endswith("verdict: does NOT reproduce from a fresh kernel as saved (see above)")
    assert (tmp_path / "hidden.ipynb").read_bytes() == before_bytes  # read-only
    assert kernels_of_this_process() == kernels_before  # the fresh kernel was shut down


@pytest.mark.kernel
def test_a_slow_cell_times_out_cleanly_and_the_cells_after_it_still_run(ctx, tmp_path):
    write(tmp_path / "slow.ipynb",
          code("import time\ntime.sleep(60)", 1),
          code("print('after')", 2, stdout("after\n")))
    kernels_before = kernels_of_this_process()
    started = time.monotonic()
    text = notebook_check(ctx, "slow.ipynb", timeout=2)
    assert time.monotonic() - started < 30
    assert "ran 2 code cell(s)" in text  # the cell after it still ran
    assert "(#0): CellTimeout: interrupted after 2 s (the check's per-cell timeout)" in text
    assert "outputs that differ" not in text  # and printed "after", as stored
    assert kernels_of_this_process() == kernels_before


@pytest.mark.kernel
def test_a_notebook_that_reproduces_is_said_to(ctx, tmp_path):
    write(tmp_path / "ok.ipynb",
          code("import datetime\nprint('at', datetime.datetime.now())", 1, stdout("at 2024-01-02 03:04:05.678\n")),
          code("total = sum(range(5))\ntotal", 2, result("10", 2)))
    text = notebook_check(ctx, "ok.ipynb")
    assert text.endswith("verdict: runs from top to bottom in a fresh kernel, outputs as stored"), text


@pytest.mark.kernel
def test_the_agent_calls_it_as_a_read_only_tool(make_agent, tmp_path):
    write(tmp_path / "nb.ipynb", code("print(undefined_here)", 1, stdout("5\n")))
    agent = make_agent(Reply(tool_calls=[Call("notebook_check", {"path": "nb.ipynb", "timeout": 20})]), "checked",
                       approval="read-only")
    run = agent.run("does nb.ipynb run from scratch?")
    call = run.tool_calls[0]
    assert call["status"] == "done", call
    assert "uses undefined_here: no cell defines it" in call["output"]


@pytest.mark.kernel
def test_nbagent_check_exits_1_on_problems_and_2_on_a_missing_notebook(tmp_path):
    write(tmp_path / "nb.ipynb", code("print(nothing)", 1))
    command = [sys.executable, "-m", "nbagent.cli", "check"]
    out = subprocess.run([*command, "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "NameError" in out.stdout, out.stderr
    out = subprocess.run([*command, "missing.ipynb"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such notebook" in out.stderr


def test_an_unknown_kernelspec_is_a_clear_error(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "no-such-kernel"}},
          "cells": [{"cell_type": "code", "id": "a", "source": "1", "metadata": {}, "outputs": [],
                     "execution_count": None}]}
    from nbagent.errors import ToolError

    with pytest.raises(ToolError, match="asks for the kernel 'no-such-kernel', which is not installed"):
        check_notebook(nb, "x.ipynb", tmp_path)


# ----- the static part, without a kernel ---------------------------------------------------------

def test_names_from_imports_functions_loops_and_magics_are_defined(tmp_path):
    cells = [code("%matplotlib inline\nimport numpy as np\nfrom os import path as p\nfiles = !ls"),
             code("def f(a, *rest, k=1):\n    return a + k + len(rest)\nfor i in range(3):\n    pass\n"
                  "squares = [n * n for n in range(i)]"),
             code("try:\n    f(np.pi, p)\nexcept Exception as exc:\n    print(exc, files, _, In)"),
             code("%%bash\necho $undefined_in_bash"),
             code("print(later)"), code("later = 1")]
    report = analyse([dict(c) for c in cells])
    assert [(h.name, h.defined_later_in) for h in report.hidden] == [("later", cells[5]["id"])]
    assert report.unparsed == [cells[3]["id"]]  # a bash cell is not Python


def test_ipython_syntax_is_blanked_not_parsed():
    assert python_source("  %time x = 1\nobj?\ny = !pwd") == "  pass\npass\ny = None"
    assert python_source("%%time\nz = 2") == "z = 2"
    assert python_source("%%writefile a.py\nprint(1)") is None


@pytest.mark.kernel
def test_stop_interrupts_the_check_and_its_kernel_goes(tmp_path):
    import threading

    from nbagent.errors import CommandKilled
    from nbagent.tools.nbcheck import check_path
    from nbagent.workspace.procs import ProcessTracker
    from nbagent.workspace.root import Workspace

    write(tmp_path / "long.ipynb", code("import time\ntime.sleep(120)", 1), code("print('never')", 2))
    tracker = ProcessTracker()
    kernels_before = kernels_of_this_process()
    threading.Timer(4.0, tracker.kill_all).start()  # the user's Stop, from another thread
    started = time.monotonic()
    with pytest.raises(CommandKilled, match="the check was stopped"):
        check_path(Workspace(tmp_path), "long.ipynb", 300, on_stop=tracker.add_stop_hook)
    assert time.monotonic() - started < 60
    assert kernels_of_this_process() == kernels_before


def run_check_on_a_terminal(tmp_path, name: str) -> tuple[subprocess.CompletedProcess, str]:
    """``nbagent check`` with its stderr on a pseudo-terminal (as in a shell), stdout piped."""
    import os

    env = {**os.environ, "NBAGENT_LOCAL": "off"}
    return run_on_a_terminal([sys.executable, "-m", "nbagent.cli", "check", name], cwd=tmp_path, timeout=180,
                             env=env, stdin=subprocess.DEVNULL)


def test_agent_cells_are_left_out_of_a_check_and_the_report_says_so(tmp_path):
    """Issue 40, item 12: the quickstart's own %agent and %%agent cells are not re-run (no model turn,
    nothing to approve); the notebook reproduces and the report names the cells left out."""
    write(tmp_path / "quick.ipynb", code("%load_ext nbagent", 1),
          code("%agent --wait what is in this folder?", 2, stdout("The folder holds quick.ipynb.\n")),
          code("%%agent\nPlot x against y", 3, stdout("Here is the plot.\n")),
          code("print(6 * 7)", 4, stdout("42\n")))
    out = subprocess.run([sys.executable, "-m", "nbagent.cli", "check", "quick.ipynb"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180,
                         env={**__import__("os").environ, "NBAGENT_LOCAL": "off"})
    assert out.returncode == 0, out.stdout + out.stderr
    cells = nbformat.read(tmp_path / "quick.ipynb", as_version=4).cells
    assert f"left out: 2 agent cell(s) ({cells[1].id}, {cells[2].id})" in out.stdout
    assert "ran 2 code cell(s)" in out.stdout and "runs from top to bottom" in out.stdout


def test_nbagent_check_on_a_terminal_shows_progress_no_kernel_warnings_and_a_readable_diff(tmp_path):
    """Issue 40, item 13: a line per cell on the terminal, the kernel's own start-up warnings kept out of
    stderr, and a changed output shown as a diff of its lines, not one long cut line."""
    stored = "".join(f"row {i}: {'x' * 60}\n" for i in range(6))
    now = stored.replace("row 3:", "row three:")
    write(tmp_path / "nb.ipynb", code("import time\ntime.sleep(0.2)", 1),
          code(f"print({now!r}, end='')", 2, stdout(stored)))
    out, terminal = run_check_on_a_terminal(tmp_path, "nb.ipynb")
    assert out.returncode == 1, out.stdout + terminal
    assert "checking: [1/2] cell" in terminal and "checking: [2/2] cell" in terminal
    assert "without encryption" not in terminal and "Traceback" not in terminal, terminal
    assert f"    -row 3: {'x' * 60}" in out.stdout and f"    +row three: {'x' * 60}" in out.stdout, out.stdout
    assert "…" not in out.stdout and "⏎" not in out.stdout
