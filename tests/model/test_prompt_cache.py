"""Requests a provider can cache, cached tokens read from every wire, and the context a local server serves.

All through the scripted HTTP server and the real openai client: it reports the cached part of each
prompt as OpenAI does (a byte-identical prefix of an earlier request, from 1,024 tokens in 128-token
blocks), and answers Ollama's and llama.cpp's context endpoints when asked to.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import nbagent
from nbagent import Agent, events as ev
from nbagent.config import AgentConfig
from nbagent.model.base import ModelRequest
from nbagent.model.chat import ChatModel, chat_usage
from nbagent.model.cost import cost_of
from nbagent.model.responses import ResponsesModel
from nbagent.store.sessions import SessionStore
from nbagent.testing import Call, Recorded, Reply
from nbagent.testing.served import ServedContext
from nbagent.testing.server import ScriptedServer
from nbagent.testing.wire_common import estimate_tokens, prompt_text


def _agent(server: ScriptedServer, root, api: str = "chat", **options) -> Agent:
    options.setdefault("approval", "auto")
    return Agent(workspace=root, model="m1", base_url=server.url, api_key="sk-test", api=api, max_retries=0,
                 repo_map=False, memory_embeddings="off", **options)


def _todos(*pairs):
    return {"todos": [{"content": c, "status": s} for c, s in pairs]}


def _session_script():
    """Two turns: a plan, a todo change, a memory write and a read; then a second prompt."""
    return [
        Reply(tool_calls=[Call("todo_write", _todos(("read the notes", "in_progress"), ("answer", "pending")))]),
        Reply(tool_calls=[Call("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[Call("remember", {"text": "notes.txt lists the release steps in order."})]),
        Reply(tool_calls=[Call("todo_write", _todos(("read the notes", "completed"), ("answer", "in_progress")))]),
        Reply(text="The notes say alpha."),
        Reply(text="In notes.txt."),
    ]


@pytest.mark.process
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_each_request_extends_the_previous_one_and_its_cached_tokens_are_counted(tmp_path, api):
    (tmp_path / "notes.txt").write_text("alpha\n" * 50)
    with ScriptedServer(*_session_script()) as server:
        with _agent(server, tmp_path, api=api) as agent:
            first = agent.run("what do the notes say? remember where the release steps are")
            second = agent.run("and where are the release steps?")
            info = agent.session_id
        server.assert_complete()
    prompts = [prompt_text(r.body or {}) for r in server.model_requests()]
    for n, (before, after) in enumerate(zip(prompts, prompts[1:]), start=1):
        assert after.startswith(before), f"request {n + 1} rewrote part of request {n}"
    usage = [e for r in (first, second) for e in r.events if isinstance(e, ev.Usage)]
    assert usage[0].cached_tokens == 0 and all(u.cached_tokens > 0 for u in usage[1:])
    assert all(u.cached_tokens <= u.input_tokens and u.cached_tokens % 128 == 0 for u in usage[1:])
    assert first.usage["cached_tokens"] == sum(u.cached_tokens for u in usage[:5])
    assert usage[-1].total_cached_tokens == sum(u.cached_tokens for u in usage)
    with SessionStore(tmp_path) as store:
        rows = store.usage(info)
        assert [r["cached_tokens"] for r in rows] == [u.cached_tokens for u in usage]
        assert store.info(info).cached_tokens == usage[-1].total_cached_tokens
    # Shown: nbagent.usage()'s column, nbagent.stats()' totals and `nbagent stats`.
    total = usage[-1].total_cached_tokens
    assert nbagent.usage(tmp_path, info)["cached_tokens"].tolist() == [first.usage["cached_tokens"],
                                                                       second.usage["cached_tokens"]]
    assert nbagent.stats(tmp_path).attrs["cached_tokens"] == total
    out = subprocess.run([sys.executable, "-m", "nbagent.cli", "stats", "--workspace", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert f"({total:,} cached)" in out.stdout, out.stdout + out.stderr


@pytest.mark.process
def test_the_second_turn_carries_relevant_memory_after_the_history_not_in_the_system_prompt(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n")
    with ScriptedServer(*_session_script()) as server:
        with _agent(server, tmp_path) as agent:
            agent.run("what do the notes say? remember where the release steps are")
            agent.run("and where are the release steps?")
    requests = [r.body or {} for r in server.model_requests()]
    systems = {json.dumps(r["messages"][0]) for r in requests}
    assert len(systems) == 1, "one system prompt for the whole session"
    prompt = requests[-1]["messages"][-1]  # the second turn's request
    assert prompt["role"] == "user" and prompt["content"].startswith("and where are the release steps?")
    assert "notes.txt lists the release steps" in prompt["content"].split("<context>")[1]
    assert "release steps" not in requests[-1]["messages"][0]["content"]


def test_a_deepseek_cache_hit_is_read_from_its_own_usage_field(tmp_path):
    chunk = {"id": "ds-1", "object": "chat.completion.chunk", "created": 1764500000, "model": "deepseek-chat"}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 2200, "completion_tokens": 3, "total_tokens": 2203,
                   "prompt_cache_hit_tokens": 1920, "prompt_cache_miss_tokens": 280}},
    ]
    body = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
    with ScriptedServer(Recorded(body)) as server:
        with _agent(server, tmp_path) as agent:
            result = agent.run("hi")
    assert result.usage["cached_tokens"] == 1920 and result.usage["input_tokens"] == 2200


def test_usage_fields_of_each_server_kind():
    openai_style = {"prompt_tokens": 3000, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 2048},
                    "completion_tokens_details": {"reasoning_tokens": 4}}
    assert (chat_usage(openai_style).cached_tokens, chat_usage(openai_style).reasoning_tokens) == (2048, 4)
    llama_cpp = {"prompt_tokens": 900, "completion_tokens": 5}
    assert chat_usage(llama_cpp, {"cache_n": 850, "prompt_n": 50}).cached_tokens == 850
    assert chat_usage({"prompt_tokens": 10, "prompt_tokens_details": None}).cached_tokens == 0


def test_cache_reads_are_priced_at_the_cache_read_price():
    whole = cost_of("gpt-4.1-mini", "openai", 10_000, 100)
    cached = cost_of("gpt-4.1-mini", "openai", 10_000, 100, cached_tokens=8_000)
    assert whole is not None and cached is not None
    # $0.40 per million input tokens, $0.10 for cache reads, $1.60 output.
    assert whole == pytest.approx(10_000 * 0.4e-6 + 100 * 1.6e-6)
    assert cached == pytest.approx(2_000 * 0.4e-6 + 8_000 * 0.1e-6 + 100 * 1.6e-6)


@pytest.mark.parametrize("base_url, sent", [
    (None, True), ("https://api.openai.com/v1", True), ("https://api.mistral.ai/v1", True),
    ("https://api.deepseek.com", False), ("http://localhost:11434/v1", False), ("https://openrouter.ai/api/v1", False),
])
def test_the_cache_key_goes_only_to_providers_that_document_it(tmp_path, base_url, sent):
    config = AgentConfig.load(workspace=tmp_path, model="m1", api_key="sk-test").with_changes(base_url=base_url)
    request = ModelRequest(system="s", messages=[{"role": "user", "content": "hi"}], cache_key="01session")
    for model in (ChatModel(config), ResponsesModel(config)):
        params = model._params(request)
        assert (params.get("prompt_cache_key") == "01session") is sent, (type(model).__name__, base_url)
        assert sent or "prompt_cache_key" not in params


def test_the_session_id_is_the_cache_key_on_the_wire_and_absent_for_a_local_server(tmp_path):
    with ScriptedServer(Reply(text="ok")) as server:
        with _agent(server, tmp_path) as agent:
            agent.run("hi")
    assert "prompt_cache_key" not in (server.model_requests()[0].body or {}), "127.0.0.1 may not know the field"


@pytest.mark.parametrize("kind, fix", [("ollama", "OLLAMA_CONTEXT_LENGTH=8192"), ("llama.cpp", "--ctx-size 8192")])
def test_a_request_larger_than_the_served_context_is_announced_before_it_is_sent(tmp_path, kind, fix):
    served = ServedContext(kind, 3072, model="m1")
    with ScriptedServer(Reply(text="ok"), Reply(text="again"), serves=served) as server:
        with _agent(server, tmp_path) as agent:
            first = agent.run("hi")
            second = agent.run("once more")
        paths = [r.path for r in server.requests]
    warnings = [e for e in first.events if isinstance(e, ev.Error) and e.kind == "context_fit"]
    assert len(warnings) == 1 and fix in warnings[0].message and "3,072" in warnings[0].message
    order = [type(e).__name__ for e in first.events]
    assert order.index("Error") < order.index("Usage"), "said before the request went out"
    assert not [e for e in second.events if isinstance(e, ev.Error)], "said once"
    if kind == "ollama":  # the model is loaded to learn its context, as the first request would load it
        assert paths[:4] == ["/props", "/api/show", "/api/ps", "/api/generate"]


def test_an_ollama_modelfile_context_is_read_when_the_model_cannot_be_listed(tmp_path):
    served = ServedContext("ollama", 2048, model="m1", num_ctx=65_536)
    with ScriptedServer(Reply(text="ok"), serves=served) as server:
        with _agent(server, tmp_path) as agent:
            result = agent.run("hi")
            assert agent.runtime.loop.served is not None and agent.runtime.loop.served.tokens == 65_536
    assert not [e for e in result.events if isinstance(e, ev.Error)]


def test_compaction_aims_below_the_served_context(tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {n} of a long file\n" for n in range(1_500)))
    reads = [Reply(tool_calls=[Call("read_file", {"path": "big.txt", "offset": 1 + 300 * n, "limit": 300})])
             for n in range(5)]
    served = ServedContext("llama.cpp", 12_000, model="m1")
    with ScriptedServer(*reads, Reply(text="done"), serves=served) as server:
        with _agent(server, tmp_path, toolsets=()) as agent:
            result = agent.run("read big.txt in parts")
    sizes = [len(prompt_text(r.body or {})) // 4 for r in server.model_requests()]
    assert max(sizes) <= 12_000, sizes
    assert any(isinstance(e, ev.Compacted) for e in result.events)
    assert not [e for e in result.events if isinstance(e, ev.Error)]


SERIAL_RUN_PATH = "/tmp/pytest-of-root/pytest-0/test_the_first_request_of_a_de0"


@pytest.mark.process
def test_the_first_request_of_a_default_session_stays_lean(tmp_path):
    """Issue 27's budget, counted as the scripted server counts (about four characters a token): every
    tool keeps its guidance, said once (the schemas name the tools; the prompt has the sets' guides)."""
    with ScriptedServer(Reply(text="ok")) as server:
        with Agent(workspace=tmp_path, model="m1", base_url=server.url, api_key="sk-test", api="chat") as agent:
            agent.run("hi")
            tools = agent.runtime.registry.names()
    body = server.model_requests()[0].body or {}
    # The workspace's path is in the prompt: counted as that of a serial run under /tmp (pytest-xdist puts
    # a popen-gwN/ in it; scripts/test.sh may put the temporary folders in RAM, under a longer path).
    messages = json.loads(json.dumps(body["messages"]).replace(str(tmp_path), SERIAL_RUN_PATH))
    tokens = estimate_tokens([messages, body["tools"]])
    assert tokens <= 4_500, f"the first request is {tokens} tokens; the goal is 4,500 at most"
    system = body["messages"][0]["content"]
    assert "Tools you can call" not in system and len(body["tools"]) == len(tools)
    for tool in body["tools"]:
        assert tool["function"]["description"], tool["function"]["name"]
        assert "additionalProperties" not in json.dumps(tool)
