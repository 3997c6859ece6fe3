"""%agent /instructions, /map and /memory search|remove|status through a real InteractiveShell."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

import nbagent.jupyter as nj


def run(shell, cell: str):
    with capture_output() as out:
        result = shell.run_cell(cell)
    return result, out.stdout + out.stderr


@pytest.mark.process
def test_knowledge_slash_commands(shell, make_agent, workspace, monkeypatch):
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(workspace / "no-global"))
    (workspace / "AGENTS.md").write_text("Use pytest.")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "core.py").write_text("class Engine:\n    def start(self, fast: bool) -> None:\n        pass\n")
    (workspace / "pkg" / "cli.py").write_text("from pkg.core import Engine\n\ndef main(argv):\n    Engine()\n")
    agent = make_agent("ok", memory_embeddings="off")
    nj.use_agent(agent, shell)
    assert "AGENTS.md  11 bytes" in run(shell, "%agent /instructions")[1]
    shown = run(shell, "%agent /map")[1]
    assert shown.index("pkg/core.py") < shown.index("pkg/cli.py") and "def start(self, fast: bool) -> None" in shown
    agent.runtime.knowledge.memory_handle().remember("Deploys use the release branch.", "decision")
    found = run(shell, "%agent /memory search release branch")[0].result
    assert list(found["category"]) == ["decision"] and "keywords" in found["why"].iloc[0]
    assert run(shell, "%agent /memory status")[0].result["scopes"][0]["rows"] == 1
    removed = run(shell, f"%agent /memory remove {int(found['id'].iloc[0])}")[0].result
    assert len(removed) == 1 and "project memory is empty" in run(shell, "%agent /memory")[1]
    handle = agent.runtime.knowledge.memory_handle()
    handle.remember("Old name still works.", "fact")
    assert len(run(shell, "%agent /memory forget Old name still works.")[0].result) == 1  # the old verb


@pytest.mark.process
def test_help_says_remove_as_the_cli_and_docs_do(shell, make_agent):
    """One vocabulary: /help names the verb the CLI (nbagent memory remove) and the docs use."""
    nj.use_agent(make_agent("ok", memory_embeddings="off"), shell)
    shown = run(shell, "%agent /help")[1]
    assert "/memory remove ID" in shown and "forget" not in shown


def test_the_live_view_lists_injected_entries_once_with_score_and_why():
    from nbagent import events as ev
    from nbagent.jupyter.widgets.turn import TurnView

    view = TurnView(turn_id="t")
    for event in (ev.TurnStart(prompt="p", turn_id="t"),
                  ev.MemoryInjected(entries=[{"id": 1, "kind": "fact", "text": "uses <uv>"}], turn_id="t"),
                  ev.MemoryInjected(entries=[{"id": 1, "kind": "fact", "text": "uses <uv>", "score": 0.62,
                                              "why": "cosine 0.52 (raw 0.87) + keywords 0.40"},
                                             {"id": 2, "kind": "decision", "text": "deploy from release",
                                              "score": 0.41, "why": "keywords 1.00"}], turn_id="t")):
        view.handle(event)
    view.flush()
    body = view.memory.body.value
    assert [e["id"] for e in view.memory.injected] == [1, 2]
    assert "uses &lt;uv&gt;" in body and "(0.62: cosine 0.52 (raw 0.87) + keywords 0.40)" in body
