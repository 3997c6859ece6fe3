"""The event-to-update translation on its own (no subprocess): notebook cells, the plan, errors, a replayed
session; every update checked against the SDK's models as it would be sent."""

from __future__ import annotations

import pytest
from acp import schema as s

from nbagent import events as ev
from nbagent.acp.updates import Translator, plan
from nbagent.acp.server import mcp_config, prompt_text
from nbagent.workspace.root import Workspace

from .conftest import check_against_schema


def _sent(update) -> dict:
    """The update as the SDK serialises it, checked back against its model."""
    payload = s.SessionNotification(session_id="s", update=update).model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
    check_against_schema(s.SessionNotification, payload)
    return payload["update"]


@pytest.fixture
def translator(tmp_path) -> Translator:
    return Translator(Workspace(tmp_path).resolve)


def test_a_notebook_edit_names_the_notebook_and_the_cell(translator, tmp_path):
    (tmp_path / "a.ipynb").write_text("{}")
    args = {"path": "a.ipynb", "cell_id": "c1", "source": "df.describe()"}
    (start,) = translator.updates(ev.ToolCall(name="notebook_edit", call_id="k", arguments=args))
    sent = _sent(start)
    assert sent["kind"] == "edit" and sent["status"] == "pending"
    assert sent["locations"] == [{"path": str(tmp_path / "a.ipynb"), "_meta": {"nbagent": {"cells": ["c1"]}}}]
    assert "cell `c1`" in sent["content"][0]["content"]["text"]
    assert "df.describe()" in sent["content"][0]["content"]["text"]
    (done,) = translator.updates(ev.ToolResult(name="notebook_edit", call_id="k", output="ok", status="done"))
    assert _sent(done)["status"] == "completed"


def test_a_path_outside_the_workspace_gets_no_location(translator):
    (start,) = translator.updates(ev.ToolCall(name="read_file", call_id="r", arguments={"path": "../../etc/passwd"}))
    assert "locations" not in _sent(start)


def test_a_denied_call_fails_and_titles_lose_control_characters(translator):
    (start,) = translator.updates(ev.ToolCall(name="bash", call_id="b", arguments={"command": "ls\x1b[2J"}))
    assert "\x1b" not in _sent(start)["title"] and _sent(start)["kind"] == "execute"
    assert translator.updates(ev.ApprovalDecision(name="bash", call_id="b", decision="deny")) == []
    (end,) = translator.updates(ev.ToolResult(name="bash", call_id="b", output="denied", status="denied"))
    assert _sent(end)["status"] == "failed"


def test_the_todo_list_is_the_plan_and_a_blocked_item_says_why():
    sent = _sent(plan([{"content": "a", "status": "completed"}, {"content": "b", "status": "blocked", "note": "no data"}]))
    assert sent["entries"] == [{"content": "a", "priority": "medium", "status": "completed"},
                               {"content": "b (blocked: no data)", "priority": "medium", "status": "pending"}]


def test_an_error_is_said_in_the_chat(translator):
    (chunk,) = translator.updates(ev.Error(message="rate limited", kind="rate_limit"))
    assert "rate limited" in _sent(chunk)["content"]["text"]


def test_prompt_blocks_become_one_prompt_and_mcp_servers_become_entries():
    text = prompt_text([s.TextContentBlock(type="text", text="explain"),
                        s.ResourceContentBlock(type="resource_link", name="a.py", uri="file:///w/a.py"),
                        s.EmbeddedResourceContentBlock(type="resource", resource=s.TextResourceContents(
                            uri="file:///w/b.py", text="x = 1"))])
    assert text == 'explain /w/a.py\n\n<context uri="/w/b.py">\nx = 1\n</context>'
    servers = mcp_config([s.McpServerStdio(name="t", command="t-server", args=["-v"],
                                           env=[s.EnvVariable(name="K", value="v")]),
                          s.HttpMcpServer(type="http", name="h", url="http://x/mcp",
                                          headers=[s.HttpHeader(name="A", value="b")])])
    assert servers == {"t": {"command": "t-server", "args": ["-v"], "env": {"K": "v"}},
                       "h": {"url": "http://x/mcp", "headers": {"A": "b"}}}


def test_an_image_in_a_prompt_is_refused():
    from acp import RequestError

    with pytest.raises(RequestError):
        prompt_text([s.ImageContentBlock(type="image", data="AA==", mime_type="image/png")])

