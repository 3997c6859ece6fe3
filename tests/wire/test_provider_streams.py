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

RECORDINGS = Path(__file__).parent.parent / "fixtures" / "provider_streams"
MISTRAL_TEXT = "Il fait beau à Zürich ☀️, 23 °C (東京 aussi)."
MISTRAL_REASONING = "L'utilisateur demande la météo à Zürich — réponse courte ☀️."


def _cut_plans(body: bytes) -> list[tuple[int, ...]]:
    """Whole; inside every multi-byte character; every 5 bytes."""
    inside = tuple(i for i, b in enumerate(body) if b & 0xC0 == 0x80)
    return [(), inside, tuple(range(5, len(body), 5))]


def _agent(server: ScriptedServer, tmp_path: Path, model: str = "m1", **kwargs) -> Agent:
    return Agent(workspace=tmp_path, model=model, base_url=server.url, api_key="sk-test", api="chat",
                 approval="auto", max_retries=0, **kwargs)


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
