"""Kernel tools through a real IPython InteractiveShell holding a DataFrame, an array and a large list."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbagent.errors import ToolError
from nbagent.jupyter.kernel.bridge import RESULT_NAME, bridge_from_shell
from nbagent.tools import kernel as kt
from nbagent.tools.kernel import KernelBridge

SETUP = """
import numpy as np
import pandas as pd
sales = pd.DataFrame({"region": ["north", "south", None, "east"] * 2500,
                      "units": range(10_000),
                      "price": [9.5, None, 12.0, 7.25] * 2500})
grid = np.arange(120_000, dtype="float64").reshape(300, 400)
readings = list(range(1_000_000))
config = {"paths": ["data/a.csv", "data/b.csv"], "seed": 7}
def scale(values, factor=2):
    "Multiply every value by factor."
    return [v * factor for v in values]
"""


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.reset()  # the instance may be an earlier test's, with its names (the shell is one per process)
    result = sh.run_cell(SETUP)
    assert result.success
    yield sh
    InteractiveShell.clear_instance()


@pytest.fixture
def kctx(ctx, shell):
    ctx.kernel = bridge_from_shell(shell)
    return ctx


def test_variables_list_the_users_names_with_types_shapes_and_sizes(kctx, shell):
    shell.run_cell("_private = 1\n1 + 1")  # makes _, _1, _i2... in the namespace
    text = kt.kernel_variables(kctx)
    rows = {line.split()[0]: line for line in text.splitlines()[2:]}
    assert set(rows) == {"config", "grid", "readings", "sales", "scale"}
    assert rows["sales"].split()[1:3] == ["pandas.DataFrame", "10000x3"]
    assert rows["grid"].split()[1:3] == ["numpy.ndarray", "300x400"] and "938 KB" in rows["grid"]
    assert "list" in rows["readings"] and "len 1,000,000" in rows["readings"] and "MB" in rows["readings"]
    assert "(values, factor=2)" in rows["scale"]
    for hidden in ("In", "Out", "get_ipython", "exit", "np", "pd", "_i1", "_private"):
        assert hidden not in rows


def test_variables_are_capped(kctx, shell):
    shell.run_cell("for i in range(300): globals()[f'v{i:03d}'] = i")  # 300 names and i
    text = kt.kernel_variables(kctx)
    assert text.startswith("306 variable(s):")
    assert "… 206 more (kernel_inspect takes any name)" in text
    assert len(text) <= kt.VARIABLES_LIMIT


def test_a_rebound_kernel_name_shows_again(kctx, shell):
    assert "open" in shell.user_ns_hidden and "open" not in kt.kernel_variables(kctx)
    shell.run_cell("open = 'my variable'")
    assert "\nopen " in kt.kernel_variables(kctx)


def test_inspect_a_dataframe(kctx):
    text = kt.kernel_inspect(kctx, "sales")
    assert text.startswith("sales: pandas.DataFrame, 10,000 rows x 3 columns")
    assert "dtypes: " in text and "units" in text
    assert "null counts:\nregion    2500\nprice     2500" in text
    assert "head(5):" in text and "north" in text
    assert "describe():" in text and "mean" in text
    assert len(text) <= kt.INSPECT_LIMIT


def test_inspect_an_array_a_list_a_function_and_steps_into_them(kctx):
    grid = kt.kernel_inspect(kctx, "grid")
    assert grid.startswith("grid: numpy.ndarray, shape (300, 400), dtype float64")
    assert "sample:" in grid and "min 0, max 119999" in grid
    readings = kt.kernel_inspect(kctx, "readings")
    assert readings.startswith("readings: list, len 1,000,000") and "18, 19, ...]" in readings
    assert len(readings) < kt.INSPECT_LIMIT
    assert "Multiply every value by factor." in kt.kernel_inspect(kctx, "scale")
    assert kt.kernel_inspect(kctx, "sales.price").startswith("sales.price: pandas.Series 'price', 10,000 values")
    assert kt.kernel_inspect(kctx, 'sales["units"]').startswith('sales["units"]: pandas.Series \'units\'')
    assert "'data/b.csv'" in kt.kernel_inspect(kctx, 'config["paths"][1]')


def test_inspect_never_evaluates(kctx, shell):
    for expr in ("scale(readings)", "sales.head()", "config.__class__", "readings[0:3]", "__import__('os')",
                 "sales; import os"):
        with pytest.raises(ToolError):
            kt.kernel_inspect(kctx, expr)
    with pytest.raises(ToolError, match="no variable 'nothing'"):
        kt.kernel_inspect(kctx, "nothing")
    assert "os" not in shell.user_ns


def test_inspect_reads_the_users_variables_not_the_shells_own_objects(kctx, shell):
    shell.run_cell("sh = get_ipython()\nclass Box: pass\nbox = Box(); box._secret = 'k'; box.shell = sh")
    for expr in ("exit._ip", "exit", "get_ipython", "sh", "sh.config", "box._secret", "box.shell.kernel", "_ih",
                 "In"):
        with pytest.raises(ToolError, match="kernel's own|private|not one of the user's"):
            kt.kernel_inspect(kctx, expr)
    assert "Box" in kt.kernel_inspect(kctx, "box")


def test_run_code_from_a_worker_thread(kctx, shell):
    count = shell.execution_count
    text = asyncio.run(asyncio.to_thread(kt.kernel_run, kctx, "print('rows:', len(sales))\ntotal = sum(readings)\ntotal"))
    assert text == "stdout:\nrows: 10000\n\nvalue:\n499999500000"
    assert shell.user_ns["total"] == 499999500000  # the change stays in the user's namespace
    assert shell.execution_count == count and RESULT_NAME not in shell.user_ns
    assert kt.kernel_run(kctx, "x = 1") == "ran: no output and no value"
    assert kt.kernel_run(kctx, "sales.shape;") == "ran: no output and no value"


def test_a_failing_run_reports_the_traceback_of_the_code_as_written(kctx):
    with pytest.raises(ToolError) as err:
        kt.kernel_run(kctx, "print('before')\nsales['missing']")
    text = str(err.value)
    assert text.startswith("stdout:\nbefore\n\nerror:\n")
    assert "KeyError: 'missing'" in text and "sales['missing']" in text and RESULT_NAME not in text
    with pytest.raises(ToolError, match="SyntaxError"):
        kt.kernel_run(kctx, "def broken(:\n    pass")


def test_output_of_other_threads_is_not_captured(kctx, capsys):
    started, done = threading.Event(), threading.Event()
    kctx.kernel.namespace.update(started=started, done=done)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault(
        "text", kt.kernel_run(kctx, "print('agent 1')\nstarted.set()\ndone.wait(5)\nprint('agent 2')")))
    worker.start()
    assert started.wait(5)
    print("user cell output")  # the main thread prints while the agent's code runs
    sys.stdout.flush()
    done.set()
    worker.join(5)
    assert result["text"] == "stdout:\nagent 1\nagent 2"
    assert capsys.readouterr().out == "user cell output\n"
    assert sys.stdout is not None and type(sys.stdout).__name__ != "_ThreadRouted"


def test_runs_do_not_touch_the_history(kctx, shell):
    shell.run_cell("a = 1")
    before = (shell.execution_count, len(shell.user_ns["In"]), shell.last_execution_result)
    kt.kernel_run(kctx, "b = a + 1\nb")
    assert (shell.execution_count, len(shell.user_ns["In"]), shell.last_execution_result) == before
    assert shell.ast_transformers == []


def test_kernel_run_always_asks_and_the_read_tools_do_not():
    tools = {t.name: t for t in kt.KERNEL.tools}
    assert list(tools) == ["kernel_variables", "kernel_inspect", "kernel_run"]
    assert tools["kernel_run"].approval == "always_ask" and not tools["kernel_run"].read_only
    assert tools["kernel_variables"].read_only and tools["kernel_inspect"].read_only
    assert tools["kernel_inspect"].approval == "never"


def test_without_a_runner_or_a_kernel(ctx):
    with pytest.raises(ToolError, match="not running inside a kernel"):
        kt.kernel_variables(ctx)
    ctx.kernel = KernelBridge({"x": 1})
    assert "x" in kt.kernel_variables(ctx)
    with pytest.raises(ToolError, match="does not let the agent run code"):
        kt.kernel_run(ctx, "x")


def test_a_runaway_kernel_run_is_interrupted_by_stop_and_by_its_timeout(kctx, shell):
    from concurrent.futures import ThreadPoolExecutor, wait

    from nbagent.errors import CommandKilled
    from nbagent.workspace.procs import ProcessTracker

    kctx.processes = ProcessTracker()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(kt.kernel_run, kctx, "spins = 0\nwhile True:\n    spins += 1")
        while not running.done() and shell.user_ns.get("spins", 0) < 1000:
            pass  # the loop has started: now Stop
        while not running.done():
            kctx.processes.kill_all()
            wait([running], timeout=0.2)
        with pytest.raises(CommandKilled, match="killed by the user"):
            running.result()
    assert shell.user_ns["spins"] > 0
    with pytest.raises(ToolError, match=r"(?s)interrupted after 0.5 s .*KeyboardInterrupt"):
        kt.kernel_run(kctx, "while True:\n    pass", timeout=0.5)
    assert "3" in kt.kernel_run(kctx, "1 + 2")  # the shell still runs code afterwards
