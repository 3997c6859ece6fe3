"""The Inspect agent: one nbagent turn per sample, through Inspect's agent bridge (see nbagent.inspect)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator

from inspect_ai.agent import Agent, AgentState, agent, agent_bridge
from inspect_ai.model import get_model
from inspect_ai.log import transcript
from inspect_ai.util import registry_info, store

from .relay import Relay

REGISTRY_NAME = "nbagent/nbagent_agent"
"""The name Inspect's command line finds it by (``--solver nbagent/nbagent_agent``; the ``inspect_ai``
entry point named ``nbagent`` loads this module)."""
DEFAULT_SESSIONS = "nbagent-inspect"
UNATTENDED = {"approval": "auto", "memory": False}
"""An evaluation measures the model on the sample alone: no memory carried in, nobody to ask."""


def nbagent_agent(sessions: str = DEFAULT_SESSIONS, **agent_options: Any) -> Agent:
    """nbagent's full turn on the sample's input (its tools, its prompt), the model being the eval's.

    Args:
        sessions: The folder that keeps every sample's nbagent session (``nbagent sessions show ID -w
            FOLDER``); relative to the working directory.
        **agent_options: Any nbagent ``Agent`` option (toolsets, max_steps, profile, approval:
            "auto" or "read-only", ...). ``model``, ``base_url`` and ``api_key`` are the bridge's.
    """
    options = {**UNATTENDED, **agent_options}
    for key in ("model", "base_url", "api_key", "api"):
        options.pop(key, None)

    async def execute(state: AgentState) -> AgentState:
        prompt = _prompt(state)
        async with agent_bridge(state) as bridge, Relay() as relay, sample_workspace() as workspace:
            turn = await asyncio.to_thread(run_turn, workspace, prompt, relay.url, get_model().name,
                                           Path(sessions).resolve(), options)
        record(turn, str(Path(sessions).resolve()))
        if relay.failure is not None:  # a limit reached, the model failed: Inspect decides what that means
            raise relay.failure
        result = bridge.state
        result.output.completion = turn["text"]
        return result

    return execute


_factory = nbagent_agent
nbagent_agent = agent(_factory)
if registry_info(nbagent_agent).name != REGISTRY_NAME:
    # Inspect prefixes the package's name only when it finds the package installed under that name
    # (site-packages, or an editable install of a distribution called "nbagent"); jupyter-nbagent's
    # editable and source-tree installs are not, so the name is given in full.
    nbagent_agent = agent(name=REGISTRY_NAME)(_factory)


def _prompt(state: AgentState) -> str:
    users = [m for m in state.messages if m.role == "user"]
    if not users:
        raise ValueError("the sample has no user message to give nbagent as its prompt")
    return users[-1].text


@contextlib.asynccontextmanager
async def sample_workspace() -> AsyncIterator[Path]:
    """The task's ``local`` sandbox folder (its files in place), else a fresh folder with the sample's files."""
    from inspect_ai.util import sandbox
    from inspect_ai.util._sandbox.local import LocalSandboxEnvironment  # as_type() needs the class

    try:
        box = sandbox()
    except ProcessLookupError:
        box = None
    if box is not None:
        try:
            local = box.as_type(LocalSandboxEnvironment)
        except TypeError:
            raise RuntimeError("nbagent runs on this machine: its workspace can be the task's 'local' sandbox "
                               "or none, not a container (run the task with sandbox='local')") from None
        yield Path(local.directory.name)
        return
    folder = Path(tempfile.mkdtemp(prefix="nbagent-inspect-"))
    try:
        write_sample_files(folder)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_sample_files(folder: Path) -> None:
    """The active sample's ``files`` (inline text, a data: URL, or a path on this machine) under ``folder``."""
    from inspect_ai.log._samples import sample_active  # the sample's files: no public accessor without a sandbox

    active = sample_active()
    files = (active.sample.files if active is not None else None) or {}
    root = folder.resolve()
    for name, content in files.items():
        target = (folder / name).resolve()
        if root not in target.parents:
            raise ValueError(f"the sample's file {name!r} is outside its workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        if content.startswith("data:") and ";base64," in content:
            target.write_bytes(base64.b64decode(content.split(";base64,", 1)[1]))
        elif len(content) < 4096 and "\n" not in content and Path(content).is_file():
            shutil.copyfile(content, target)
        else:
            target.write_text(content, encoding="utf-8")


def run_turn(workspace: Path, prompt: str, base_url: str, model: str, sessions: Path,
             options: dict[str, Any]) -> dict[str, Any]:
    """One nbagent turn (on this worker thread), its session moved into ``sessions``: what to record."""
    from ..batching.task import deny_approval
    from ..engine.agent import Agent as NbAgent
    from ..evals.report import transcript_line
    from ..store.db import workspace_db_path
    from ..store.sessions import SessionStore

    nb = NbAgent(workspace=workspace, model=model, base_url=base_url, api_key="inspect-bridge", api="chat",
                 approver=deny_approval, session="new", origin="inspect", **options)
    try:
        result = nb.run(prompt)
    finally:
        nb.close()
    sessions.mkdir(parents=True, exist_ok=True)
    with SessionStore(sessions) as store_:
        session_id = store_.move_from(workspace_db_path(workspace), result.session_id)
        lines = [transcript_line(row["message"]) for row in store_.messages(session_id)]
    return {"text": result.text, "end": result.reason, "session_id": session_id, "usage": dict(result.usage),
            "steps": sum(1 for e in result.events if type(e).__name__ == "Usage"),
            "tool_calls": [{"name": c["name"], "status": c["status"], "is_error": c["is_error"]}
                           for c in result.tool_calls], "errors": list(result.errors), "transcript": lines}


def record(turn: dict[str, Any], sessions: str) -> None:
    """nbagent's usage, cost and transcript in the sample's store and its transcript (Inspect's log)."""
    summary = {"session_id": turn["session_id"], "sessions": sessions, "end": turn["end"], "steps": turn["steps"],
               "tool_calls": len(turn["tool_calls"]), "usage": turn["usage"], "cost": turn["usage"].get("cost"),
               "errors": turn["errors"]}
    store().set("nbagent", summary)
    transcript().info({**summary, "tool_calls": turn["tool_calls"], "transcript": "\n".join(turn["transcript"])},
                      source="nbagent")
