"""The panel's kernel undo and restart-and-replay in a real JupyterLab (docs/notebooks.md "Kernel state"):
the user runs a notebook's cells in the browser, the panel's agent runs a cell that changes ``data`` in
place and rebinds ``label``, Undo restores ``label`` (and the cell's outputs in the open notebook) and
offers the plan, whose hostile first line shows as text, and the confirmed replay rebuilds ``data`` in
the kernel."""

from __future__ import annotations

import json
import urllib.request

import nbformat
import pytest
from jupyter_client import BlockingKernelClient

from nbagent.testing import Call, Reply

from .live_flow import open_notebook
from .test_lab_panel import PANEL  # noqa: E402  (tests/browser is on sys.path)

pytestmark = [pytest.mark.browser, pytest.mark.integration]

HOSTILE = "# <img src=x onerror=window.__pwned=1> \x1b[31mred\x1b[0m"
CELLS = [f"{HOSTILE}\ndata = [1, 2, 3]", "label = 'user'",
         "data.append(99)\nlabel = 'agent'\nprint('appended')\nlen(data)"]  # the agent runs the third


@pytest.fixture(scope="module")
def lab_args():
    return ["--expose-app-in-browser"]  # window.jupyterapp, for open_notebook


class KernelOf:
    """The notebook's kernel seen from Python, as another client of the same kernel: silent expressions."""

    def __init__(self, lab, path: str):
        with urllib.request.urlopen(f"{lab.url}/api/sessions?token={lab.token}") as response:
            (kernel_id,) = [s["kernel"]["id"] for s in json.load(response) if s["path"] == path]
        self.client = BlockingKernelClient(connection_file=str(lab.runtime / f"kernel-{kernel_id}.json"))
        self.client.load_connection_file()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=30)

    def value(self, expression: str) -> str:
        msg_id = self.client.execute("", silent=True, user_expressions={"v": expression})
        reply = self.client.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=30)
        result = reply["content"]["user_expressions"]["v"]
        assert result["status"] == "ok", result
        return result["data"]["text/plain"]

    def close(self) -> None:
        self.client.stop_channels()


def test_undo_restores_a_name_and_the_confirmed_replay_rebuilds_data(page, lab, model_server, shot):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, lab.root / "work.ipynb")
    ids = [c.id for c in nb.cells]
    open_notebook(page, lab, "work.ipynb")
    kernel = KernelOf(lab, "work.ipynb")
    try:
        # The user runs the first two cells in the browser (Shift+Enter moves on to the next).
        page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        page.keyboard.press("Shift+Enter")
        page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputPrompt", has_text="[2]").wait_for()
        assert kernel.value("(data, label)") == "([1, 2, 3], 'user')"

        page.click("li[data-id='nbagent-panel']")
        panel_ = page.locator(PANEL)
        panel_.locator(".jp-nbagent-input textarea").wait_for(state="visible")
        model_server.enqueue(
            Reply(tool_calls=[Call("notebook_run", {"path": "work.ipynb", "cell_ids": [ids[2]]})]),
            Reply(text="Appended 99."))
        box = panel_.locator(".jp-nbagent-input textarea")
        box.fill("append 99 to data")
        box.press("Enter")
        panel_.locator(".jp-nbagent-approval button", has_text="Approve").click()
        panel_.locator(".jp-nbagent-assistant", has_text="Appended 99.").wait_for()
        panel_.locator(".jp-nbagent-status").wait_for(state="detached")
        assert kernel.value("(data, label)") == "([1, 2, 3, 99], 'agent')"
        page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-OutputArea-output", has_text="appended").wait_for()

        bar = panel_.locator(".jp-nbagent-checkpoint").last
        # notebook_run changed the open notebook's outputs only: the checkpoint holds them all the same.
        assert bar.locator(".jp-nbagent-checkpoint-files").inner_text() == "1 file changed: work.ipynb"
        bar.locator(".jp-nbagent-undo").click()
        bar.locator(".jp-nbagent-redo").wait_for()  # the server's checkpoint event reached the panel
        restored = bar.locator(".jp-nbagent-checkpoint-kernel").inner_text()
        assert restored == "kernel variables restored: label · not restored: data (changed in place)", restored
        assert kernel.value("(data, label)") == "([1, 2, 3, 99], 'user')"
        # The agent's cell is unrun again in the open notebook; the cells the user ran keep their counts.
        cells = page.locator(".jp-Notebook .jp-Cell")
        cells.nth(2).locator(".jp-OutputArea-output").wait_for(state="detached")
        assert cells.locator(".jp-InputPrompt").all_inner_texts() == ["[1]:", "[2]:", "[ ]:"]

        plan = bar.locator(".jp-nbagent-replay")
        assert plan.locator(".jp-nbagent-replay-title").inner_text() == (
            "restart and replay would clear the kernel's variables and run 2 cell(s), "
            "time not known (no cell was timed):")  # they ran before nbagent was loaded in the kernel
        kernel_line, plan_box = bar.locator(".jp-nbagent-checkpoint-kernel").bounding_box(), plan.bounding_box()
        assert kernel_line and plan_box and kernel_line["y"] < plan_box["y"], "the plan reads after what it is for"
        rows = plan.locator(".jp-nbagent-replay-cell")
        assert [rows.nth(i).get_attribute("data-cell-id") for i in range(rows.count())] == ids[:2]
        assert [rows.nth(i).locator(".jp-nbagent-replay-where").inner_text()
                for i in range(rows.count())] == [f"cell {ids[0]}", f"cell {ids[1]}"]
        # The hostile first line is text: shown as typed, no element made of it, no handler ran.
        assert rows.nth(0).locator(".jp-nbagent-replay-line").text_content() == HOSTILE
        assert rows.nth(1).locator(".jp-nbagent-replay-line").text_content() == "label = 'user'"
        assert panel_.locator("img").count() == 0
        assert page.evaluate("() => window.__pwned") is None
        shot("kernel-replay-plan")

        plan.locator(".jp-nbagent-replay-ask").click()
        confirm = plan.locator(".jp-nbagent-replay-run")
        assert confirm.inner_text() == "Confirm: clear the variables and run 2 cell(s)"
        plan.locator(".jp-nbagent-replay-cancel").click()  # Cancel runs nothing and offers the plan again
        plan.locator(".jp-nbagent-replay-ask").click()
        assert kernel.value("data") == "[1, 2, 3, 99]"
        confirm.click()
        outcome = bar.locator(".jp-nbagent-replay-outcome")
        outcome.wait_for(timeout=60_000)
        assert outcome.inner_text() == "replayed 2 cell(s)"
        assert kernel.value("(data, label)") == "([1, 2, 3], 'user')"  # rebuilt by the user's own cells
        assert page.evaluate("() => window.__pwned") is None
        shot("kernel-replayed")
        model_server.assert_complete()
    finally:
        kernel.close()
