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
EXTENSIONS = ("jupyterlab_chat", "jupyter_ai_router", "jupyter_ai_persona_manager", "jupyter_ai_acp_client")


@pytest.fixture
def scripted():
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def jp_server_config(scripted, monkeypatch):
    # nbagent's own model configuration, read by the `nbagent acp` process the persona starts.
    for name, value in {"OPENAI_BASE_URL": scripted.url, "OPENAI_API_KEY": "sk-test",
                        "NBAGENT_MODEL": "scripted-model", "NBAGENT_MAX_RETRIES": "0",
                        "JUPYTER_AI_ACP_CLIENT_E2E_TESTING_ONLY": "1"}.items():  # only our persona loads
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


async def test_a_message_to_nbagent_gets_a_streamed_answer_and_a_tool_call(jp_ws_fetch, jp_root_dir, scripted):
    (jp_root_dir / "notes.txt").write_text("kumquat\n")
    (jp_root_dir / "talk.chat").write_text("{}")
    scripted.enqueue(Reply(tool_calls=[Call("read_file", {"path": "notes.txt"}, id="call_read")]),
                     Reply(text="The note says kumquat, " + "and more words " * 20))
    ws = await jp_ws_fetch("api", "chat", "ws", "talk.chat")
    seen: dict = {}
    await _frames(ws, seen, lambda s: True)  # the connection frame
    ws.write_message(json.dumps({"type": "client", "action": "send", "id": uuid.uuid4().hex,
                                 "body": "what does notes.txt say?", "metadata": {"to_persona": PERSONA}}))
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
