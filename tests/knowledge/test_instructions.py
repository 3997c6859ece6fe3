"""Instruction files: the hierarchy's order, the cap and its note, changes picked up on the next turn."""

from __future__ import annotations

import os

import pytest

from nbagent.knowledge.instructions import Instructions
from nbagent.testing.replies import Reply
from nbagent.testing.scripted import ScriptedModel


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    path = tmp_path / "user-config"
    path.mkdir()
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(path))
    return path


def layout(root, config_dir):
    (config_dir / "AGENTS.md").write_text("GLOBAL: answer in English.")
    (root / "AGENTS.md").write_text("ROOT-AGENTS: use pytest.")
    (root / "CLAUDE.md").write_text("ROOT-CLAUDE: small commits.")
    (root / "NBAGENT.md").write_text("ROOT-NBAGENT: notebooks stay clean.")
    rules = root / ".nbagent" / "rules"
    rules.mkdir(parents=True)
    (rules / "b-style.md").write_text("RULE-B: four spaces.")
    (rules / "a-data.md").write_text("RULE-A: never edit data/.")
    (rules / "notes.txt").write_text("NOT-A-RULE")
    sub = root / "analysis" / "q3"
    sub.mkdir(parents=True)
    (root / "analysis" / "AGENTS.md").write_text("ANALYSIS: plots use seaborn.")
    (sub / "NBAGENT.md").write_text("Q3: fiscal quarters start in April.")
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "AGENTS.md").write_text("ELSEWHERE: must not load")
    return sub / "report.ipynb"


MARKERS = ["GLOBAL", "ROOT-AGENTS", "ROOT-CLAUDE", "ROOT-NBAGENT", "RULE-A", "RULE-B", "ANALYSIS", "Q3"]


def test_layers_go_from_global_to_the_notebooks_directory_in_order(tmp_path, config_dir):
    root = tmp_path / "ws"
    root.mkdir()
    notebook = layout(root, config_dir)
    block = Instructions(root, notebook).block()
    positions = [block.index(m) for m in MARKERS]
    assert positions == sorted(positions)
    assert "ELSEWHERE" not in block and "NOT-A-RULE" not in block
    assert "## From global: AGENTS.md" in block and "## From analysis/q3/NBAGENT.md" in block
    assert "## From .nbagent/rules/a-data.md" in block


def test_the_agent_lists_its_files_and_picks_up_a_change_on_the_next_turn(tmp_path, config_dir):
    from nbagent import Agent

    root = tmp_path / "ws"
    root.mkdir()
    notebook = layout(root, config_dir)
    model = ScriptedModel([Reply(text="one"), Reply(text="two"), Reply(text="three")])
    with Agent(workspace=root, model=model, origin=str(notebook), repo_map=False) as agent:
        files = agent.instruction_files()
        assert [f.source for f in files] == [
            "global: AGENTS.md", "AGENTS.md", "CLAUDE.md", "NBAGENT.md", ".nbagent/rules/a-data.md",
            ".nbagent/rules/b-style.md", "analysis/AGENTS.md", "analysis/q3/NBAGENT.md"]
        assert files[1].size == len("ROOT-AGENTS: use pytest.") and files[1].included == files[1].size
        agent.run("hello")
        reads = agent.runtime.knowledge.instructions.reads
        agent.run("again")
        assert agent.runtime.knowledge.instructions.reads == reads, "unchanged files are not read again"
        target = root / "AGENTS.md"
        target.write_text("ROOT-AGENTS: use pytest -x, changed.")
        os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 1_000_000_000))
        agent.run("and now")
    systems = [r.system for r in model.requests]
    assert all("Q3: fiscal quarters" in s for s in systems)
    assert "use pytest -x, changed" not in systems[1] and "use pytest -x, changed" in systems[2]


def test_the_cap_cuts_and_names_what_was_cut(tmp_path, config_dir):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_text("A" * 5_000)
    (root / "CLAUDE.md").write_text("C" * 9_000)
    (root / "NBAGENT.md").write_text("N" * 100)
    instructions = Instructions(root, total_cap=10_000, file_cap=8_000)
    block = instructions.block()
    assert "CLAUDE.md (cut at 8000 characters)" in block
    assert "CLAUDE.md (cut at 5000 characters: the total cap)" in block
    assert "NBAGENT.md (left out: the 10000-character cap was reached)" in block
    assert block.count("A") >= 5_000 and "N" * 100 not in block
    assert [f.included for f in instructions.files()] == [5_000, 5_000, 0]


def test_hostile_names_are_skipped(tmp_path, config_dir):
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text("OUTSIDE SECRET")
    (root / "AGENTS.md").symlink_to(outside)
    os.mkfifo(root / "CLAUDE.md")
    (root / "NBAGENT.md").mkdir()
    (root / ".nbagent" / "rules").mkdir(parents=True)
    (root / ".nbagent" / "rules" / "ok.md").write_text("fine rule")
    instructions = Instructions(root)
    assert "OUTSIDE SECRET" not in instructions.block() and "fine rule" in instructions.block()
    assert [f.source for f in instructions.files()] == [".nbagent/rules/ok.md"]
