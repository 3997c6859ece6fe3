"""%agent --wait in a real ipykernel (jupyter_client): the cell awaits the turn, and an interrupt
aborts the turn cleanly, leaving the session consistent for the next prompt."""

from __future__ import annotations

import time

import pytest
from jupyter_client.manager import start_new_kernel

pytestmark = [pytest.mark.kernel, pytest.mark.integration]

SETUP = """
%load_ext nbagent
from nbagent import Agent
from nbagent.jupyter import use_agent, last_result
from nbagent.testing.replies import Reply, Slow
from nbagent.testing.scripted import ScriptedModel
agent = Agent(workspace={workspace!r}, model=ScriptedModel([
    Slow(0.05, Reply(text="word " * 400)), Reply(text="Still here.")]), approval="auto")
use_agent(agent)
"""


@pytest.fixture
def kernel(tmp_path):
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def execute(kc, code: str, timeout: float = 60) -> tuple[dict, str]:
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], _stdout(kc, msg_id)


def _until_answering(kc, msg_id: str, seconds: float = 3.0) -> str:
    """The cell's output during the first seconds of the turn (the Slow reply is then mid-answer)."""
    out: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
        except Exception:  # queue.Empty: nothing yet
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            out.append(_text(msg))
    return "".join(out)


def _text(msg: dict) -> str:
    """What an output message shows as text: a stream's chunk, or the turn's block (one display,
    updated in place, each update carrying the whole text so far)."""
    if msg["msg_type"] == "stream":
        return msg["content"]["text"]
    if msg["msg_type"] in ("display_data", "update_display_data"):
        return msg["content"]["data"].get("text/plain", "")
    return ""


def _stdout(kc, msg_id: str) -> str:
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=10)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(_text(msg))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)


def test_interrupt_during_wait_aborts_the_turn_and_the_session_goes_on(kernel, tmp_path):
    km, kc = kernel
    content, _ = execute(kc, SETUP.format(workspace=str(tmp_path)))
    assert content["status"] == "ok", content
    msg_id = kc.execute("%agent --wait tell me a lot")
    # A Slow reply of 400 words takes ~13 s, so after 3 s the turn is mid-answer; its text is written
    # when the turn ends (one output), so it shows after the interrupt.
    streamed = _until_answering(kc, msg_id)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error", reply["content"]
    text = streamed + _stdout(kc, msg_id)
    assert "word word" in text and "the turn was aborted" in text
    content, text = execute(kc, "print(agent.busy, [m['role'] for m in agent.session.messages])")
    # The kernel's history (the setup cell) came first, as a note: %agent attaches it by default.
    assert content["status"] == "ok" and text.strip() == "False ['system', 'user', 'assistant']"
    content, text = execute(kc, "%agent --wait are you there?")
    assert content["status"] == "ok" and "Still here." in text
