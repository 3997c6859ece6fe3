"""nbagent as an Inspect AI agent: ``nbagent_agent(**agent_options)`` runs a full nbagent turn on a sample.

    from inspect_ai import Task, eval
    from nbagent.inspect import nbagent_agent

    eval(Task(dataset=[...], solver=nbagent_agent(toolsets="core,notebook"), scorer=includes(),
              sandbox="local"), model="openai/gpt-4.1-mini")

    inspect eval my_task.py --solver nbagent/nbagent_agent -S max_steps=30     # by name

The sample's input is the prompt; its workspace is the task's ``local`` sandbox (where Inspect put
the sample's files), or without a sandbox a fresh folder holding the sample's files. nbagent calls
the evaluation's model through Inspect's agent bridge (``relay``), so Inspect's model, limits and
log apply; approvals are set for an unattended run (``auto``: the workspace is the sample's own).
The turn's final answer becomes the sample's output for the scorer; nbagent's session is kept in
``sessions`` (a folder: ``nbagent sessions show ID -w FOLDER``) and its usage, cost and transcript
go into the sample's store (``nbagent``) and an info event of its transcript.

Needs ``pip install 'jupyter-nbagent[inspect]'``.
"""

from __future__ import annotations

from .agent import nbagent_agent

__all__ = ["nbagent_agent"]
