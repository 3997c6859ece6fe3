"""The runner inside a real ipykernel: the agent's prints, values and tracebacks reach the model only.

The cell below waits for a worker thread that runs code through the bridge, which is what a cell
running ``%agent --wait`` does while the agent calls kernel_run.
"""

from __future__ import annotations

import queue

import pytest

pytestmark = pytest.mark.kernel

jupyter_client = pytest.importorskip("jupyter_client")

CELL = """
import threading
from nbagent.jupyter.kernel.bridge import bridge_from_shell
bridge = bridge_from_shell(get_ipython())
runs = {}
worker = threading.Thread(target=lambda: runs.update(
    ok=bridge.run_code("print('agent says hi')\\nanswer = 21 * 2\\nanswer"),
    failed=bridge.run_code("1/0")))
worker.start()
worker.join()
print("cell:", runs["ok"]["stdout"].strip(), runs["ok"]["result"], "ZeroDivisionError" in runs["failed"]["error"])
answer
"""


@pytest.mark.integration
def test_runner_in_a_real_kernel_keeps_its_output_out_of_the_notebook():
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        reply = client.execute(CELL, reply=True, timeout=60)
        msg_id = reply["parent_header"]["msg_id"]
        assert reply["content"]["status"] == "ok", reply["content"]
        messages = _iopub_until_idle(client, msg_id)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    kinds = [m["msg_type"] for m in messages if m["msg_type"] not in ("status", "execute_input")]
    streams = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert streams == "cell: agent says hi 42 True\n"  # the agent's own print never reached the notebook
    assert "error" not in kinds  # nor did its traceback
    results = [m["content"]["data"]["text/plain"] for m in messages if m["msg_type"] == "execute_result"]
    assert results == ["42"]  # only the cell's own value, with its own execution count
    assert [m["content"]["execution_count"] for m in messages if m["msg_type"] == "execute_result"] == [1]


def _iopub_until_idle(client, msg_id: str) -> list[dict]:
    messages = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=60)
        except queue.Empty:
            raise AssertionError(f"no idle status; got {[m['msg_type'] for m in messages]}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return messages
