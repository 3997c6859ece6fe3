"""Batch fixtures: a real git repository and a scripted model server answering any task's requests."""

from __future__ import annotations

import gc
import re
import subprocess
from pathlib import Path

import pytest

from nbagent.testing import Call, Fail, Reply, ScriptedServer, Stall


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir()
    (root / "src" / "util.py").write_text("def f():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def writer(body: dict, latency: float = 0.0):
    """Task "write NAME": write NAME.txt holding the task, then answer "wrote NAME". "fail": a 500."""
    messages = body["messages"]
    task = next(m["content"] for m in messages if m["role"] == "user")
    if "fail" in task:
        return Fail(500, "the scripted model refuses this task")
    name = re.search(r"write (\w+)", task)
    if messages[-1]["role"] == "user" and name:
        reply = Reply(tool_calls=[Call("write_file", {"path": f"{name.group(1)}.txt", "content": task + "\n"})])
    else:
        reply = Reply(text=f"answered: {task}")
    return Stall(latency, reply) if latency else reply


@pytest.fixture
def model_server():
    with ScriptedServer(responder=writer) as server:
        yield server


@pytest.fixture
def model_options(model_server) -> dict:
    return {"model": "scripted-model", "base_url": model_server.url, "api_key": "sk-test", "max_retries": 0,
            "memory": False}


@pytest.fixture
def thawed_heap():
    """The test starts as a process that never froze its heap (the test run freezes it: tests/conftest.py)."""
    gc.unfreeze()
    yield
    gc.freeze()
