"""Real providers' wire formats through the chat adapter, from recordings served byte for byte.

The recordings in tests/fixtures/provider_streams/ follow what Mistral, Gemini (OpenAI-compatible
endpoint), DeepSeek and OpenRouter send; each is served whole and cut at many byte positions
(inside SSE lines and inside multi-byte characters), and the turn must come out the same.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nbagent import Agent, events as ev
from nbagent.config import AgentConfig
from nbagent.model.base import ModelRequest, ReasoningChunk, ResponseDone, TextChunk
from nbagent.model.chat import ChatModel
from nbagent.testing import Recorded, Reply
from nbagent.testing.server import ScriptedServer
from tests.paths import FIXTURES

RECORDINGS = FIXTURES / "provider_streams"
MISTRAL_TEXT = "Il fait beau à Zürich ☀️, 23 °C (東京 aussi)."
MISTRAL_REASONING = "L'utilisateur demande la météo à Zürich — réponse courte ☀️."


def _cut_plans(body: bytes) -> list[tuple[int, ...]]:
    """Whole; inside every multi-byte character; every 5 bytes."""
    inside = tuple(i for i, b in enumerate(body) if b & 0xC0 == 0x80)
    return [(), inside, tuple(range(5, len(body), 5))]


def _agent(server: ScriptedServer, tmp_path: Path, model: str = "m1", **kwargs) -> Agent:
    return Agent(workspace=tmp_path, model=model, base_url=server.url, api_key="sk-test", api="chat",
                 approval="auto", max_retries=0, **kwargs)


@pytest.mark.process
@pytest.mark.parametrize("plan", [0, 1, 2])
def test_mistral_content_parts_become_text_and_reasoning_wherever_the_stream_is_cut(tmp_path, plan):
    body = (RECORDINGS / "mistral_thinking_parts.sse").read_bytes()
    with ScriptedServer(Recorded(body, _cut_plans(body)[plan])) as server:
        agent = _agent(server, tmp_path)
        events = list(agent.stream("weather?"))
        agent.close()
        server.assert_complete()
    end = events[-1]
    assert isinstance(end, ev.TurnEnd) and end.reason == "done", [e for e in events if isinstance(e, ev.Error)]
    assert end.text == MISTRAL_TEXT
    assert "".join(e.text for e in events if isinstance(e, ev.ReasoningDelta)) == MISTRAL_REASONING


def test_a_non_streamed_completion_with_content_parts(tmp_path):
    config = AgentConfig.load(workspace=tmp_path, model="magistral", api_key="sk-test", max_retries=0)

    async def run(url: str) -> list:
        model = ChatModel(config.with_changes(base_url=url))
        try:
            request = ModelRequest(system="", messages=[{"role": "user", "content": "?"}], stream=False)
            return [c async for c in model.stream(request)]
        finally:
            await model.aclose()

    with ScriptedServer(Recorded.from_file(RECORDINGS / "mistral_thinking_parts.json")) as server:
        chunks = asyncio.run(run(server.url))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Réponse : 42 — «ça marche»."
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "Réfléchissons… ☀️"
    done = chunks[-1]
    assert isinstance(done, ResponseDone) and done.message["content"] == "Réponse : 42 — «ça marche»."


def _assistant_sent(server: ScriptedServer, request_index: int) -> dict:
    body = server.model_requests("chat")[request_index].body
    return next(m for m in body["messages"] if m["role"] == "assistant")


@pytest.mark.process
@pytest.mark.parametrize("plan", [0, 1, 2])
def test_gemini_thought_signature_goes_back_on_its_tool_call(tmp_path, plan):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    body = (RECORDINGS / "gemini_thought_signature.sse").read_bytes()
    signature = json.loads(body.split(b"\n")[0][6:])["choices"][0]["delta"]["tool_calls"][0]["extra_content"]
    with ScriptedServer(Recorded(body, _cut_plans(body)[plan]), Reply(text="Milk.")) as server:
        agent = _agent(server, tmp_path, model="gemini-3-pro-preview")
        assert agent.run("notes?").text == "Milk."
        agent.close()
        sent = _assistant_sent(server, 1)
    assert sent["tool_calls"][0]["extra_content"] == signature
    assert sent["tool_calls"][0]["id"] == "function-call-5521"


@pytest.mark.process
def test_deepseek_reasoning_content_goes_back_on_the_message_with_tool_calls(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    body = (RECORDINGS / "deepseek_reasoning_tool.sse").read_bytes()
    with ScriptedServer(Recorded(body, _cut_plans(body)[1]), Reply(text="Milk.")) as server:
        agent = _agent(server, tmp_path, model="deepseek-reasoner")
        result = agent.run("notes?")
        agent.close()
        sent = _assistant_sent(server, 1)
    assert result.tool_calls[0]["arguments"] == {"path": "notes.txt"}
    assert sent["reasoning_content"] == "The user wants the notes file; I should read it — «notes.txt»."
    assert "reasoning" not in sent


@pytest.mark.process
def test_a_null_reasoning_content_after_the_reasoning_erases_nothing(tmp_path):
    """DeepSeek's tool-call deltas carry "reasoning_content": null after the reasoning: a null in a delta
    never replaces what came before, so the next request still has the reasoning (HTTP 400 without it)."""
    (tmp_path / "notes.txt").write_text("buy milk\n")
    body = (RECORDINGS / "deepseek_reasoning_null.sse").read_bytes()
    assert body.count(b'"reasoning_content":null') == 5
    with ScriptedServer(Recorded(body, _cut_plans(body)[1]), Reply(text="Milk.")) as server:
        agent = _agent(server, tmp_path, model="deepseek-reasoner")
        result = agent.run("notes?")
        agent.close()
        sent = _assistant_sent(server, 1)
    assert result.tool_calls[0]["arguments"] == {"path": "notes.txt"}
    assert sent["reasoning_content"] == "The user wants the notes file; I should read it — «notes.txt»."


@pytest.mark.process
def test_openrouter_reasoning_details_are_merged_and_sent_back(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    body = (RECORDINGS / "openrouter_reasoning_details.sse").read_bytes()
    with ScriptedServer(Recorded(body, _cut_plans(body)[2]), Reply(text="Milk.")) as server:
        agent = _agent(server, tmp_path, model="google/gemini-2.5-pro")
        agent.run("notes?")
        agent.close()
        sent = _assistant_sent(server, 1)
    assert sent["reasoning_details"] == [
        {"type": "reasoning.text", "text": "**Lire** le fichier demandé… ✓", "format": "google-gemini-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "EncRypTeD+/blob==", "id": "tool_read_file_k2",
         "format": "google-gemini-v1", "index": 1},
    ]
    assert "reasoning" not in sent  # a plain copy some providers refuse on input


@pytest.mark.process
def test_provider_fields_are_stored_and_dropped_for_another_model(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    body = (RECORDINGS / "gemini_thought_signature.sse").read_bytes()
    with ScriptedServer(Recorded(body), Reply(text="Milk."), Reply(text="again"), Reply(text="other")) as server:
        agent = _agent(server, tmp_path, model="gemini-3-pro-preview")
        agent.run("notes?")
        session = agent.session_id
        agent.close()
        resumed = _agent(server, tmp_path, model="gemini-3-pro-preview", session=session)  # from the database
        resumed.run("and again?")
        resumed.close()
        other = _agent(server, tmp_path, model="another-model", session=session)
        other.run("elsewhere?")
        other.close()
        same, moved = _assistant_sent(server, 2), _assistant_sent(server, 3)
    assert "extra_content" in same["tool_calls"][0]
    assert "extra_content" not in moved["tool_calls"][0]


def _sse(*chunks: object) -> bytes:
    return b"".join(b"data: " + (c if isinstance(c, bytes) else json.dumps(c).encode()) + b"\n\n" for c in chunks)


def _delta(**delta: object) -> dict:
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m1",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


@pytest.mark.process
def test_an_error_object_inside_the_stream_ends_the_turn_with_its_message_and_keeps_the_text(tmp_path):
    body = _sse(_delta(role="assistant", content="Half an ans"),
                {"error": {"message": "upstream <b>overloaded</b>", "code": 529}}, b"[DONE]")
    with ScriptedServer(Recorded(body, _cut_plans(body)[2])) as server:
        agent = _agent(server, tmp_path)
        events = list(agent.stream("go"))
        agent.close()
    errors = [e for e in events if isinstance(e, ev.Error)]
    assert [e.kind for e in errors] == ["stream_broken"]
    assert "upstream <b>overloaded</b>" in errors[0].message
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "Half an ans"
    assert events[-1].reason == "error"


@pytest.mark.process
def test_chunks_the_sdk_types_do_not_describe_are_read_as_json(tmp_path):
    """NaN (Python's json reads it, strict parsers do not), a chunk that is not an object, a choice
    without a delta, keep-alive comments and an empty event: the answer comes through."""
    body = (b": keep-alive\n\n" + _sse(_delta(role="assistant", content="Hel"), [1, 2],
                                        {"choices": [{"index": 0, "finish_reason": None}]},
                                        _delta(content="lo", weight=float("nan")))
            + b"event: ping\ndata:\n\n"
            + _sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 2}}, b"[DONE]"))
    with ScriptedServer(Recorded(body)) as server:
        agent = _agent(server, tmp_path)
        result = agent.run("hi")
        agent.close()
    assert result.reason == "done" and result.text == "Hello"
    assert (result.usage["input_tokens"], result.usage["output_tokens"]) == (7, 2)


@pytest.mark.process
def test_streamed_requests_of_one_agent_share_one_connection(tmp_path):
    """After [DONE] the body is read to its end, so HTTP/1.1 keeps the connection for the next step."""
    (tmp_path / "a.txt").write_text("x\n")
    from nbagent.testing import Call

    with ScriptedServer(Reply(tool_calls=[Call("read_file", {"path": "a.txt"})]), Reply(text="done")) as server:
        agent = _agent(server, tmp_path)
        assert agent.run("read").text == "done"
        agent.close()
        peers = [r.peer for r in server.model_requests()]
    assert len(peers) == 2 and len(set(peers)) == 1, peers
