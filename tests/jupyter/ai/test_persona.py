"""Jupyter AI 3 in a real Jupyter server: "nbagent" is a persona of its chat with no configuration, and a
message addressed to it gets a streamed answer and a tool call shown in the chat."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest

pytest.importorskip("jupyter_ai_acp_client", reason="Jupyter AI's ACP client is not installed (docs/acp.md)")

from nbagent.testing.replies import Call, Reply
from nbagent.testing.server import ScriptedServer

pytestmark = [pytest.mark.integration, pytest.mark.process]

PERSONA = "jupyter-ai-personas::nbagent::NbagentAcpPersona"
EXTENSIONS = ("jupyterlab_chat", "jupyter_ai_router", "jupyter_ai_persona_manager", "jupyter_ai_acp_client",
              "nbagent.jupyter.server")


@pytest.fixture
def scripted():
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def jp_server_config(scripted, monkeypatch):
    # nbagent's own model configuration, read by the `nbagent acp` process the persona starts.
    for name, value in {"OPENAI_BASE_URL": scripted.url, "OPENAI_API_KEY": "sk-test",
                        "NBAGENT_MODEL": "scripted-model", "NBAGENT_MAX_RETRIES": "0",
                        "JUPYTER_AI_ACP_CLIENT_E2E_TESTING_ONLY": "1",  # only our persona loads
                        # The chat's permission buttons are a browser's to press: the kernel calls run unasked.
                        "NBAGENT_TOOL_APPROVALS": json.dumps({"notebook_run": "never", "kernel_run": "never"})
                        }.items():
        monkeypatch.setenv(name, value)
    return {"ServerApp": {"jpserver_extensions": {name: True for name in EXTENSIONS}},
            # no built-in MCP server: jupyter_server_mcp is not started here
            "PersonaManager": {"builtin_mcp_servers": []}}


async def _frames(ws, seen: dict, until, timeout: float = 120) -> None:
    """Read server frames, keeping each message's latest version by id, until ``until(seen)``."""
    deadline = time.monotonic() + timeout
    while not until(seen):
        left = deadline - time.monotonic()
        assert left > 0, f"gave up waiting; messages: {json.dumps(list(seen.values()))[:2000]}"
        frame = json.loads(await asyncio.wait_for(ws.read_message(), left))
        if frame.get("action") == "connection":
            seen.update({m["id"]: m for m in frame["messages"]})
        elif frame.get("action") == "message":
            seen[frame["message"]["id"]] = frame["message"]


def _answer(seen: dict) -> str:
    return "".join(m.get("body", "") for m in seen.values() if m.get("sender") == PERSONA)


def _tool_calls(seen: dict) -> list[dict]:
    return [c for m in seen.values() if m.get("sender") == PERSONA
            for c in (m.get("metadata") or {}).get("tool_calls", [])]


async def _ask(jp_ws_fetch, text: str):
    ws = await jp_ws_fetch("api", "chat", "ws", "talk.chat")
    seen: dict = {}
    await _frames(ws, seen, lambda s: True)  # the connection frame
    ws.write_message(json.dumps({"type": "client", "action": "send", "id": uuid.uuid4().hex,
                                 "body": text, "metadata": {"to_persona": PERSONA}}))
    return ws, seen


async def test_a_message_to_nbagent_gets_a_streamed_answer_and_a_tool_call(jp_ws_fetch, jp_root_dir, scripted):
    (jp_root_dir / "notes.txt").write_text("kumquat\n")
    (jp_root_dir / "talk.chat").write_text("{}")
    scripted.enqueue(Reply(tool_calls=[Call("read_file", {"path": "notes.txt"}, id="call_read")]),
                     Reply(text="The note says kumquat, " + "and more words " * 20))
    ws, seen = await _ask(jp_ws_fetch, "what does notes.txt say?")
    versions: list[str] = []

    def answered(s: dict) -> bool:
        text = _answer(s)
        if text and (not versions or versions[-1] != text):
            versions.append(text)
        return "and more words " * 20 in text and any(c.get("status") == "completed" for c in _tool_calls(s))

    await _frames(ws, seen, answered)
    ws.close()
    scripted.assert_complete()
    assert len(versions) > 2, "the answer arrived in one piece, not streamed"
    (read,) = [c for c in _tool_calls(seen) if c.get("tool_call_id") == "call_read"]
    assert read["status"] == "completed" and "read_file" in read["title"]
    assert (jp_root_dir / ".nbagent").is_dir()  # the session is stored beside the chat, as always


async def test_the_personas_notebook_and_kernel_tools_work_on_the_servers_notebook_and_kernel(
        jp_ws_fetch, jp_fetch, jp_root_dir, scripted):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)", id="c1")]
    nbformat.write(nb, jp_root_dir / "nb.ipynb")
    (jp_root_dir / "talk.chat").write_text("{}")
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": "nb.ipynb", "name": "nb.ipynb", "type": "notebook", "kernel": {"name": "python3"}}))
    assert json.loads(response.body)["kernel"]["id"]
    scripted.enqueue(
        Reply(tool_calls=[Call("notebook_run", {"path": "nb.ipynb", "cell_ids": ["c1"]}, id="call_cells")]),
        Reply(tool_calls=[Call("kernel_run", {"code": "print(x + 1)", "kernel": "nb.ipynb"}, id="call_kernel")]),
        Reply(text="x is 42 in the notebook's kernel."))
    ws, seen = await _ask(jp_ws_fetch, "run the notebook, then tell me x + 1")

    def answered(s: dict) -> bool:
        return "x is 42" in _answer(s) and sum(c.get("status") in ("completed", "failed") for c in _tool_calls(s)) >= 2

    await _frames(ws, seen, answered)
    ws.close()
    scripted.assert_complete()
    results = {m["tool_call_id"]: m["content"] for m in scripted.last.body["messages"] if m["role"] == "tool"}
    # The cell ran in the notebook's own kernel (the server's), and the server wrote its output to the notebook.
    assert "42" in results["call_cells"], results["call_cells"]
    outputs = nbformat.read(jp_root_dir / "nb.ipynb", as_version=4).cells[0].outputs
    assert any("42" in str(o.get("text", "")) for o in outputs), outputs
    # kernel_run reached the same kernel through the server: x is the cell's.
    assert "43" in results["call_kernel"], results["call_kernel"]
    statuses = {c.get("tool_call_id"): c.get("status") for c in _tool_calls(seen)}
    assert statuses["call_cells"] == statuses["call_kernel"] == "completed"
