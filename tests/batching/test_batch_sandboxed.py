"""A batch in "sandboxed" mode (issue 35): its agents' commands run in the sandbox without asking, and
what would ask (leaving the sandbox) is denied, since a batch never waits on a person."""

from __future__ import annotations

import os
import pwd
import uuid
from pathlib import Path

import pytest

import nbagent
from nbagent.testing import Call, Reply, ScriptedServer
from nbagent.workspace import sandbox as sb

pytestmark = pytest.mark.process


def test_a_sandboxed_batch_runs_commands_confined_and_denies_leaving(tmp_path):
    if sb.current().mechanism != "bubblewrap":
        pytest.skip("bubblewrap does not work here")
    outside = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / f"nbagent-batch-{uuid.uuid4().hex[:8]}"
    (tmp_path / "data.txt").write_text("x\n")

    def responder(body: dict):
        done = sum(m["role"] == "tool" for m in body["messages"])
        if done == 0:
            return Reply(tool_calls=[Call("bash", {"command": f"echo in > made.txt; echo out > {outside}"})])
        if done == 1:
            return Reply(tool_calls=[Call("bash", {"command": f"echo out > {outside}", "outside_sandbox": "why not"})])
        return Reply(text="; ".join(m["content"].splitlines()[0] for m in body["messages"] if m["role"] == "tool"))

    with ScriptedServer(responder=responder) as server:
        df = nbagent.batch(["go"], workspace=tmp_path, approval="sandboxed", progress=False, model="m",
                           base_url=server.url, api_key="sk-test", max_retries=0, memory=False)
    row = df.iloc[0]
    assert row["reason"] == "done" and row["error"] is None
    assert row["files_changed"] == ["made.txt"]  # the workspace copy was written; nothing outside it
    assert not outside.exists()
    assert row["text"].startswith("exit code: 1") and "denied" in row["text"].split("; ")[1]


def test_the_batch_command_offers_sandboxed():
    from nbagent.cli.app import _parser

    args = _parser().parse_args(["batch", "t.txt", "--out", "r.csv", "--approval", "sandboxed"])
    assert args.approval == "sandboxed"
