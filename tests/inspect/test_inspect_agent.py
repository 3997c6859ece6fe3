"""nbagent as an Inspect AI agent, on Inspect's own mock model (no network): the model's calls go
through Inspect's agent bridge, nbagent's tools act in the sample's workspace, and the log holds
nbagent's session, usage and transcript."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.paths import CHECKOUT

pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import resolve_sample_attachments  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, includes, scorer  # noqa: E402
from inspect_ai.solver import SolverSpec, TaskState  # noqa: E402
from inspect_ai.util import sandbox  # noqa: E402

from nbagent.inspect import nbagent_agent  # noqa: E402
from nbagent.inspect.relay import chunks  # noqa: E402
from nbagent.store.sessions import SessionStore  # noqa: E402


def mock_model(*outputs: ModelOutput):
    for output in outputs:  # with usage given, the mock model counts no tokens (its tokenizer is a download)
        output.usage = ModelUsage(input_tokens=900, output_tokens=30, total_tokens=930)
    return get_model("mockllm/model", custom_outputs=list(outputs))


def tool_call(name: str, arguments: dict) -> ModelOutput:
    return ModelOutput.for_tool_call("mockllm/model", name, arguments)


def answer(text: str) -> ModelOutput:
    return ModelOutput.from_content("mockllm/model", text)


@scorer(metrics=[accuracy()])
def file_holds_target():
    async def score(state: TaskState, target: Target) -> Score:
        written = await sandbox().read_file("answer.txt")
        return Score(value=CORRECT if written.strip() == target.text else INCORRECT, answer=written)

    return score


@pytest.mark.integration
@pytest.mark.process  # nbagent's tools, the local sandbox, the CLI
def test_an_inspect_eval_runs_nbagent_in_the_sandbox_and_logs_its_transcript(tmp_path):
    model = mock_model(tool_call("read_file", {"path": "numbers.csv"}),
                       tool_call("write_file", {"path": "answer.txt", "content": "5\n"}),
                       answer("The sum is 5; it is in answer.txt."))
    task = Task(dataset=[Sample(input="Add up the numbers in numbers.csv and write the sum into answer.txt.",
                                target="5", files={"numbers.csv": "n\n2\n3\n"})],
                solver=nbagent_agent(sessions=str(tmp_path / "sessions"), toolsets="core"),
                scorer=[file_holds_target(), includes()], sandbox="local")
    (log,) = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    (sample,) = [resolve_sample_attachments(s) for s in log.samples or []]  # long texts are stored apart
    assert {name: s.value for name, s in (sample.scores or {}).items()} == {"file_holds_target": CORRECT,
                                                                          "includes": CORRECT}
    assert sample.output.completion.endswith("The sum is 5; it is in answer.txt.")
    assert len([e for e in sample.events if e.event == "model"]) == 3  # every call went through the bridge

    kept = sample.store["nbagent"]
    assert kept["end"] == "done" and kept["steps"] == 3 and kept["tool_calls"] == 2
    assert kept["usage"]["input_tokens"] == 3 * 900 and kept["usage"]["output_tokens"] == 3 * 30
    (info,) = [e for e in sample.events if e.event == "info" and e.source == "nbagent"]
    transcript = info.data["transcript"]
    assert "Add up the numbers in numbers.csv" in transcript and "-> write_file(" in transcript
    assert "--- tool [read_file]\n     1\tn\n     2\t2\n     3\t3" in transcript  # the sample's file, in the sandbox
    with SessionStore(tmp_path / "sessions") as store:  # the session is kept
        roles = [m["message"]["role"] for m in store.messages(kept["session_id"])]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


@pytest.mark.integration
@pytest.mark.process  # nbagent's tools, the local sandbox, the CLI
def test_the_agent_is_found_by_name_and_works_without_a_sandbox(tmp_path, monkeypatch):
    """By name, as `inspect eval ... --solver nbagent/nbagent_agent -S toolsets=core` finds it; without a
    sandbox the sample's files make a workspace of its own."""
    monkeypatch.chdir(tmp_path)
    model = mock_model(tool_call("read_file", {"path": "notes/todo.txt"}), answer("It says: water the plants."))
    task = Task(dataset=[Sample(input="What does notes/todo.txt say?", target="water the plants",
                                files={"notes/todo.txt": "water the plants\n"})], scorer=includes())
    spec = SolverSpec("nbagent/nbagent_agent", {"toolsets": "core"}, {"toolsets": "core"})
    (log,) = eval(task, model=model, solver=spec, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    assert log.eval.solver == "nbagent/nbagent_agent"
    (sample,) = log.samples or []
    assert sample.scores["includes"].value == CORRECT
    assert sample.store["nbagent"]["sessions"] == str(tmp_path / "nbagent-inspect")
    assert Path(tmp_path / "nbagent-inspect").is_dir()


@pytest.mark.integration
@pytest.mark.process  # nbagent's tools, the local sandbox, the CLI
def test_a_limit_reached_through_the_bridge_ends_the_sample_as_inspect_decides(tmp_path):
    model = mock_model(*[tool_call("list_dir", {"path": "."}) for _ in range(6)])
    task = Task(dataset=[Sample(input="Look around.", target="nothing")], scorer=includes(), message_limit=4,
                solver=nbagent_agent(sessions=str(tmp_path / "sessions"), toolsets="core"))
    (log,) = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    (sample,) = log.samples or []
    assert sample.limit is not None and sample.limit.type == "message"
    assert sample.store["nbagent"]["end"] == "error"  # nbagent's turn ended on the refused request: recorded
    assert "Message limit reached" in sample.store["nbagent"]["errors"][0]


@pytest.mark.integration
@pytest.mark.process  # nbagent's tools, the local sandbox, the CLI
def test_inspects_command_line_finds_the_agent_through_the_entry_point(tmp_path):
    """`inspect eval TASK --solver nbagent/nbagent_agent`, in a fresh process that has not imported nbagent:
    Inspect loads the module the ``inspect_ai`` entry point names (here from a dist-info written as pip
    writes pyproject's [project.entry-points.inspect_ai], since this checkout is not the installed one)."""
    import tomllib

    declared = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())
    entry_points = declared["project"]["entry-points"]["inspect_ai"]
    assert entry_points == {"nbagent": "nbagent.inspect"}
    dist = tmp_path / "site" / "nbagent_entry_points-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nbagent-entry-points\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[inspect_ai]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *sys.path])}
    (tmp_path / "cli_task.py").write_text((Path(__file__).parent / "cli_task.py").read_text())  # a relative task path
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "cli_task.py",
                           "--solver", "nbagent/nbagent_agent", "-S", "toolsets=core", "--log-dir", str(tmp_path / "logs"),
                           "--display", "plain"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    (log,) = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]
    assert log.status == "success" and log.eval.solver == "nbagent/nbagent_agent"
    (sample,) = log.samples or []
    assert sample.scores["includes"].value == CORRECT and sample.store["nbagent"]["tool_calls"] == 1


def test_a_completion_becomes_the_stream_nbagent_reads():
    completion = {"id": "c1", "created": 1, "model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                  "choices": [{"index": 0, "finish_reason": "tool_calls",
                               "message": {"role": "assistant", "content": "Reading.", "tool_calls": [
                                   {"id": "t1", "type": "function",
                                    "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]}}]}
    first, finish, usage = chunks(completion, usage=True)
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"]["content"] == "Reading."
    assert first["choices"][0]["delta"]["tool_calls"] == [
        {"index": 0, "id": "t1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a\"}"}}]
    assert finish["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    assert usage["choices"] == [] and usage["usage"]["prompt_tokens"] == 3
    assert len(chunks(completion, usage=False)) == 2
