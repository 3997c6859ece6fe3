"""The panel's own controls on the server: the models it may pick (GET /nbagent/api/models, the
endpoint's /models list beside the configured names) and a session's model and approval mode changed
live over its socket (the "settings" message, Agent.reconfigure as `%agent --model/--approval` does)."""

from __future__ import annotations

import socket

import pytest

from nbagent.testing import ScriptedServer
from nbagent.testing.replies import Call, Reply

pytestmark = pytest.mark.process

EDIT = Call("edit_file", {"path": "notes.txt", "old_string": "red", "new_string": "blue"}, id="call_edit")


@pytest.fixture
def endpoint(monkeypatch):
    with ScriptedServer(model="served-model") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("NBAGENT_MODEL", "configured-model")
        monkeypatch.setenv("NBAGENT_LOCAL", "off")
        yield server


async def test_models_lists_the_configured_names_then_the_endpoints(api, endpoint):
    await api("PUT", "settings", body={"model": "panel-default"})
    choices = await api("GET", "models")
    assert choices["models"] == ["panel-default", "configured-model", "served-model"]
    assert choices["endpoint"] == endpoint.url and choices["problem"] is None
    assert [r.path for r in endpoint.requests] == ["/v1/models"]


async def test_an_endpoint_that_cannot_list_leaves_the_configured_names_and_says_why(api, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", dead)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("NBAGENT_MODEL", "configured-model")
    monkeypatch.setenv("NBAGENT_LOCAL", "off")
    choices = await api("GET", "models")
    assert choices["models"] == ["configured-model"]
    assert "cannot reach" in choices["problem"]


async def test_a_sessions_approval_mode_changes_live_for_it_alone(api, connect, model, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("colour = red\n")
    model.enqueue(Reply(tool_calls=[EDIT]), Reply(text="edited without asking"))
    first, second = (await api("POST", "sessions"))["id"], (await api("POST", "sessions"))["id"]
    client, other = await connect(first), await connect(second)
    await client.until("snapshot")
    snapshot = await other.until("snapshot")
    await client.send(type="settings", approval="auto")
    assert (await client.until("settings_changed"))["settings"] == {"approval": "auto"}
    await client.send(type="prompt", text="edit")
    assert (await client.until("turn_end"))["text"] == "edited without asking"
    assert "approval_request" not in client.types()
    assert (jp_root_dir / "notes.txt").read_text() == "colour = blue\n"
    assert "settings_changed" not in other.types() and snapshot["state"]["settings"]["approval"] == "ask"
    assert (await api("GET", "settings"))["approval"] is None, "the user's defaults are not touched"


async def test_a_bad_settings_message_is_refused_to_its_sender(api, connect):
    client = await connect((await api("POST", "sessions"))["id"])
    await client.until("snapshot")
    for message, words in (({"approval": "yolo"}, "approval must be one of ask, auto, read-only"),
                           ({"model": "  "}, "model must be a model's name"),
                           ({"toolsets": ["nope"]}, "unknown tool set(s): nope"),
                           ({}, 'gives "model", "approval" and/or "toolsets"')):
        await client.send(type="settings", **message)
        error = await client.until("error")
        assert words in error["message"] and error["kind"] == "config"
