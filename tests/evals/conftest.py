"""Eval fixtures: a scripted model server that plays the harness's test tasks (tests/evals/tasks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nbagent.testing import Call, Fail, Reply, ScriptedServer, Stall

TASKS = Path(__file__).parent / "tasks"


def harness_model(body: dict):
    """Model "scripted-good" does what the prompt asks (write N into NAME.txt); "scripted-lazy" only
    says it did. A prompt about thinking stalls past any time limit; one about a failing endpoint is a 500."""
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    if "endpoint fails" in prompt:
        return Fail(500, "the scripted endpoint is down")
    if "long time" in prompt:
        return Stall(30, Reply(text="still thinking"))
    wanted = re.search(r", (\d+), into (\w+\.txt)", prompt)
    if body["model"] == "scripted-good" and wanted and messages[-1]["role"] == "user":
        return Reply(tool_calls=[Call("write_file", {"path": wanted.group(2), "content": wanted.group(1) + "\n"})])
    return Reply(text="Done: the file is written.")


@pytest.fixture
def model_server():
    with ScriptedServer(responder=harness_model) as server:
        yield server


@pytest.fixture
def model_options(model_server) -> dict:
    return {"base_url": model_server.url, "api_key": "sk-test", "max_retries": 0}
