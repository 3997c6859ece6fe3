"""A machine without git: the agent still starts and works; the git tools and the repository's
checkpoints say plainly that git is missing (GitPython alone would refuse to be imported)."""

from __future__ import annotations

import pytest
import json
import os
import subprocess
import sys

from .repos import git

pytestmark = pytest.mark.process

SCRIPT = """
import json, sys
from nbagent import Agent
from nbagent.testing import Call, Reply
from nbagent.testing.scripted import ScriptedModel

errors = []
agent = Agent(workspace=sys.argv[1], approval="auto", memory=False, model=ScriptedModel([
    Reply(tool_calls=[Call("write_file", {"path": "new.txt", "content": "x\\n"}), Call("git_status", {})]),
    "done"]))
agent.subscribe(lambda e: errors.append(e.message) if e.type == "error" else None)
result = agent.run("write and look")
agent.close()
print(json.dumps({"reason": result.reason, "errors": errors,
                  "calls": [(c["name"], c["status"], c["output"]) for c in result.tool_calls]}))
"""


def test_without_git_on_path_the_agent_works_and_says_what_is_missing(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "init")
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "NBAGENT_"))}
    env.update(PATH=str(empty), NBAGENT_LOCAL="off")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(repo)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["reason"] == "done"
    (write, _, _), (status_name, status, output) = seen["calls"]
    assert write == "write_file" and (repo / "new.txt").read_text() == "x\n"
    assert (status_name, status) == ("git_status", "failed") and "git is not installed" in output
    assert any("git is not installed" in e for e in seen["errors"])  # no checkpoint, said why
