"""The Completer against the scripted OpenAI-compatible server, through the real openai client: each way
of asking (llama.cpp's /infill, /v1/completions with suffix, chat), the choice between them, the cache,
a cancelled stream closing the model's connection, and the costs counted in ``nbagent stats``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from nbagent.complete.completer import Completer, CompletionsOff
from nbagent.complete.prompt import CompletionRequest
from nbagent.config import AgentConfig
from nbagent.knowledge.stats import completion_summary, read_completions
from nbagent.testing import Reply, ScriptedServer
from nbagent.testing.replies import Fail, Slow
from nbagent.testing.served import ServedContext

NAMES = {"variables": [{"name": "sales", "type": "pandas.DataFrame", "shape": "2x2",
                        "columns": [["region", "object"], ["revenue_eur", "float64"]]}],
         "imports": ["import pandas as pd"]}


def _config(tmp_path, server, **more):
    options = dict(workspace=tmp_path, base_url=server.url, api_key="sk-test", model="scripted-model",
                   max_retries=0, local="off", completions="auto", completion_fim="auto", telemetry=True)
    options.update(more)
    return AgentConfig.load(**options)


async def _complete(completer, request, model=None):
    return "".join([piece async for piece in completer.stream(request, completer.choice(model))])


REQUEST = CompletionRequest(prefix="sales.groupby('region')['", suffix="'].sum()", path="a.ipynb",
                            cells_before=[{"cell_type": "code", "source": "sales = load()"}], names=NAMES)


async def test_llama_cpp_gets_infill_with_the_kernel_names_as_extra_context(tmp_path):
    with ScriptedServer(Reply("revenue_eur"), serves=ServedContext("llama.cpp", 8192)) as server:
        completer = Completer(_config(tmp_path, server), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"
        [infill] = server.model_requests("infill")
        body = infill.body
        assert body is not None and infill.path == "/infill"
        assert body["input_prefix"].endswith("sales = load()\n\n# %%\nsales.groupby('region')['")
        assert body["input_suffix"] == "'].sum()"
        assert "'revenue_eur' float64" in body["input_extra"][0]["text"]
        assert body["stream"] is True
        server.assert_complete()
    [record] = read_completions(tmp_path)
    assert record["kind"] == "completion" and record["mode"] == "infill"
    assert record["input_tokens"] > 0 and record["output_tokens"] > 0 and not record["cancelled"]


async def test_ollama_gets_v1_completions_with_a_suffix(tmp_path):
    with ScriptedServer(Reply("revenue_eur"), serves=ServedContext("ollama", 8192)) as server:
        completer = Completer(_config(tmp_path, server), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"
        [request] = server.model_requests("completions")
        body = request.body or {}
        assert body["model"] == "scripted-model" and body["suffix"] == "'].sum()"
        assert body["prompt"].startswith("# Jupyter notebook a.ipynb") and "revenue_eur" in body["prompt"]
        assert body["prompt"].endswith("sales.groupby('region')['")
        server.assert_complete()


async def test_another_server_gets_a_short_chat_prompt_and_the_completion_model(tmp_path):
    with ScriptedServer(Reply("```python\nrevenue_eur\n```")) as server:
        completer = Completer(_config(tmp_path, server, completion_model="small-coder"), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"
        [chat] = server.model_requests("chat")
        body = chat.body or {}
        assert body["model"] == "small-coder"
        assert "sales.groupby('region')['<CURSOR>'].sum()" in body["messages"][1]["content"]
        assert "tools" not in body


async def test_a_refused_infill_falls_back_to_chat_for_good(tmp_path):
    with ScriptedServer(Fail(501, "infill is not supported by this model"), Reply("revenue_eur"), Reply("region"),
                        serves=ServedContext("llama.cpp", 8192)) as server:
        completer = Completer(_config(tmp_path, server), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"
        other = CompletionRequest(prefix="sales['", suffix="']", names=NAMES)
        assert await _complete(completer, other) == "region"
        assert [r.api for r in server.model_requests()] == ["infill", "chat", "chat"]
        server.assert_complete()


async def test_the_same_prompt_is_answered_from_the_cache(tmp_path):
    with ScriptedServer(Reply("revenue_eur"), Reply("units")) as server:
        completer = Completer(_config(tmp_path, server, completion_fim="chat"), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"
        assert await _complete(completer, REQUEST) == "revenue_eur"
        assert len(server.model_requests()) == 1 and completer.requests == 1
        changed = CompletionRequest(prefix=REQUEST.prefix, suffix=REQUEST.suffix, path=REQUEST.path,
                                    cells_before=REQUEST.cells_before, names={"variables": [], "imports": []})
        assert await _complete(completer, changed) == "units"  # other kernel names: another prompt
        assert len(server.model_requests()) == 2


async def test_stopping_the_stream_closes_the_model_request_at_once(tmp_path):
    slow = Slow(0.1, Reply("x" * 400))  # 50 chunks of 8 characters: five seconds if read to the end
    with ScriptedServer(slow, chunk_size=8) as server:
        completer = Completer(_config(tmp_path, server, completion_fim="chat"), tmp_path)

        started = time.monotonic()
        pieces = completer.stream(REQUEST, completer.choice())
        assert await pieces.__anext__() == "x" * 8
        assert completer.in_flight == 1 and server.open_connections == 1
        await pieces.aclose()
        assert completer.in_flight == 0
        deadline = time.monotonic() + 2
        while server.open_connections and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert server.open_connections == 0, "the model's connection was left open"
        assert time.monotonic() - started < 1.5
    [record] = read_completions(tmp_path)
    assert record["cancelled"] and record["estimated"]


def test_completions_are_off_for_the_offline_model_unless_turned_on(tmp_path):
    config = AgentConfig.load(workspace=tmp_path, local="on")
    with pytest.raises(CompletionsOff, match="offline model"):
        Completer(config, tmp_path).choice()
    with ScriptedServer() as server:
        with pytest.raises(CompletionsOff, match="off"):
            Completer(_config(tmp_path, server, completions="off"), tmp_path).choice()
        assert Completer(_config(tmp_path, server), tmp_path).choice("other").model == "other"


@pytest.mark.process
async def test_nbagent_stats_counts_completions_as_their_own_kind(tmp_path):
    with ScriptedServer(Reply("revenue_eur"), Slow(0.2, Reply("y" * 200))) as server:
        completer = Completer(_config(tmp_path, server, completion_fim="completions"), tmp_path)
        assert await _complete(completer, REQUEST) == "revenue_eur"

        pieces = completer.stream(CompletionRequest(prefix="z", suffix=""), completer.choice())
        await pieces.__anext__()
        await pieces.aclose()
    totals = completion_summary(read_completions(tmp_path))
    assert totals["requests"] == 2 and totals["cancelled"] == 1 and totals["input_tokens"] > 0
    def stats(*args):
        out = subprocess.run([sys.executable, "-m", "nbagent.cli", "stats", "--workspace", str(tmp_path), *args],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout

    data = json.loads(stats("--json"))
    assert data["summary"]["turns"] == 0
    assert data["completions"]["requests"] == 2 and data["completions"]["cancelled"] == 1
    assert "inline completions 2 (1 cancelled)" in stats()
