"""Each API's form for images, recorded through the real openai client against the scripted server:
Chat Completions (a user message of images after the tool results; OpenAI, vLLM, Ollama, llama.cpp),
Responses (image parts in the function_call_output), a blind model (captions only), a server that
says whether its model sees, and an endpoint that refuses images."""

from __future__ import annotations

import base64

import pytest

from nbagent import Agent, events as ev
from nbagent.model.image_wire import TOOL_IMAGES_INTRO
from nbagent.testing import Call, Fail, Reply
from nbagent.testing.served import ServedContext
from nbagent.testing.server import ScriptedServer

from .pictures import chart_notebook

pytestmark = pytest.mark.integration


def _agent(server: ScriptedServer, root, api: str = "chat", **options) -> Agent:
    options.setdefault("approval", "auto")
    return Agent(workspace=root, model=options.pop("model", "m1"), base_url=server.url, api_key="sk-test", api=api,
                 max_retries=0, repo_map=False, memory_embeddings="off", **options)


def _read_then_answer() -> list:
    return [Reply(tool_calls=[Call("notebook_read", {"path": "charts.ipynb", "include_outputs": True}, id="call_1")]),
            Reply(text="It rises, then falls.")]


def _chat_images(body: dict) -> list[str]:
    return [p["image_url"]["url"] for m in body["messages"] if isinstance(m.get("content"), list)
            for p in m["content"] if p.get("type") == "image_url"]


def _run(server, tmp_path, api="chat", **options):
    chart_notebook(tmp_path / "charts.ipynb")
    server.enqueue(*_read_then_answer())
    with _agent(server, tmp_path, api=api, **options) as agent:
        result = agent.run("what stands out in the chart?")
    server.assert_complete()
    return result, server.model_requests()[-1].body


def _is_png_data_url(url: str) -> bool:
    return url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1])[:4] == b"\x89PNG"


def test_chat_completions_puts_the_images_in_a_user_message_right_after_the_tool_results(tmp_path):
    with ScriptedServer() as server:
        result, body = _run(server, tmp_path)
    roles = [m["role"] for m in body["messages"]]
    tool_at = roles.index("tool")
    images_message = body["messages"][tool_at + 1]
    assert images_message["role"] == "user" and roles[tool_at + 2:] == []
    parts = images_message["content"]
    assert parts[0] == {"type": "text", "text": TOOL_IMAGES_INTRO}
    assert parts[1]["type"] == "text" and parts[1]["text"].startswith("cell cell0 output 1: image/png 640x480")
    assert parts[2]["type"] == "image_url" and _is_png_data_url(parts[2]["image_url"]["url"])
    tool = body["messages"][tool_at]
    assert isinstance(tool["content"], str) and "[image 1: cell cell0 output 1: image/png 640x480" in tool["content"]
    assert "base64" not in tool["content"]
    assert result.text == "It rises, then falls."


def test_responses_puts_the_images_in_the_function_call_output(tmp_path):
    with ScriptedServer() as server:
        _, body = _run(server, tmp_path, api="responses")
    (output,) = [i for i in body["input"] if i.get("type") == "function_call_output"]
    parts = output["output"]
    assert parts[0]["type"] == "input_text" and "[image 1: cell cell0 output 1" in parts[0]["text"]
    assert parts[1]["type"] == "input_text" and parts[1]["text"].startswith("cell cell0 output 1: image/png")
    assert parts[2]["type"] == "input_image" and parts[2]["detail"] == "auto" and _is_png_data_url(parts[2]["image_url"])
    assert not any(i.get("role") == "user" and isinstance(i.get("content"), list) for i in body["input"])


def test_a_model_marked_blind_gets_the_caption_only(tmp_path):
    with ScriptedServer() as server:
        _, body = _run(server, tmp_path, vision_models={"m1": False})
    assert _chat_images(body) == [] and [m["role"] for m in body["messages"]][-1] == "tool"
    assert "[image 1: cell cell0 output 1: image/png 640x480" in body["messages"][-1]["content"]


@pytest.mark.parametrize("sees", [True, False])
def test_ollama_says_whether_its_model_sees(tmp_path, sees):
    served = ServedContext("ollama", context=32_768, model="m1", vision=sees)
    with ScriptedServer(serves=served) as server:
        _, body = _run(server, tmp_path)
    urls = _chat_images(body)
    assert len(urls) == (1 if sees else 0)
    assert all(_is_png_data_url(u) for u in urls)  # Ollama reads base64 data URLs only


@pytest.mark.parametrize("sees", [True, False])
def test_llama_cpp_says_whether_a_projector_is_loaded(tmp_path, sees):
    served = ServedContext("llama.cpp", context=32_768, model="m1", vision=sees)
    with ScriptedServer(serves=served) as server:
        _, body = _run(server, tmp_path)
    assert len(_chat_images(body)) == (1 if sees else 0)


def test_an_endpoint_that_refuses_images_gets_one_retry_without_them_and_none_after(tmp_path):
    chart_notebook(tmp_path / "charts.ipynb")
    refusal = Fail(400, "Invalid content type. image_url is only supported by certain models.", code="invalid_value")
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("notebook_read", {"path": "charts.ipynb", "include_outputs": True})]),
                       refusal, Reply(text="From the caption: one chart."),
                       Reply(tool_calls=[Call("notebook_read", {"path": "charts.ipynb", "include_outputs": True})]),
                       Reply(text="still one chart"))
        with _agent(server, tmp_path) as agent:
            first = agent.run("look at the chart")
            second = agent.run("and again")
        server.assert_complete()
        bodies = [r.body for r in server.model_requests()]
    assert len(_chat_images(bodies[1])) == 1 and _chat_images(bodies[2]) == []
    assert bodies[2]["messages"] == [m for m in bodies[1]["messages"] if not isinstance(m.get("content"), list)]
    notes = [e for e in first.events if isinstance(e, ev.Error)]
    assert [n.kind for n in notes] == ["images_refused"] and "without them" in notes[0].message
    assert first.text == "From the caption: one chart."
    assert _chat_images(bodies[4]) == []  # remembered for the session
    assert not [e for e in second.events if isinstance(e, ev.Error)]


def test_an_error_that_is_not_about_images_is_not_retried_as_one(tmp_path):
    chart_notebook(tmp_path / "charts.ipynb")
    with ScriptedServer() as server:
        server.enqueue(Reply(tool_calls=[Call("notebook_read", {"path": "charts.ipynb", "include_outputs": True})]),
                       Fail(401, "bad key"))
        with _agent(server, tmp_path) as agent:
            result = agent.run("look")
    assert [e.kind for e in result.events if isinstance(e, ev.Error)] == ["auth"]


def test_the_guide_says_to_look_at_a_chart_and_the_system_prompt_stays_byte_identical(tmp_path):
    with ScriptedServer() as server:
        _run(server, tmp_path)
        first, second = (r.body for r in server.model_requests())
    assert first["messages"][0] == second["messages"][0]
    assert "Look at a chart's image before calling it done." in first["messages"][0]["content"]
    assert second["messages"][: len(first["messages"])] == first["messages"]


def test_an_image_counts_as_its_tiles_in_the_usage_the_server_reports(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with ScriptedServer() as server:
        with_images, _ = _run(server, tmp_path / "a")
    with ScriptedServer() as server:
        blind, _ = _run(server, tmp_path / "b", vision=False)
    extra = with_images.usage["input_tokens"] - blind.usage["input_tokens"]
    assert 255 <= extra <= 765 + 200  # one 640x480 chart: 2x1 tiles (425 tokens) and its label, not its base64


def test_image_tokens_are_counted_apart_in_the_event_the_result_the_store_and_the_stats(tmp_path):
    import io

    from PIL import Image as PILImage

    import nbagent
    from nbagent.images import estimate_tokens

    with ScriptedServer() as server:
        result, body = _run(server, tmp_path, telemetry=True)
    (url,) = _chat_images(body)
    shown = PILImage.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
    expected = estimate_tokens(*shown)
    usages = [e for e in result.events if isinstance(e, ev.Usage)]
    assert [u.image_tokens for u in usages] == [0, expected]  # the first request had no image yet
    assert usages[-1].total_image_tokens == expected and result.usage["image_tokens"] == expected
    assert usages[-1].image_tokens <= usages[-1].input_tokens
    frame = nbagent.usage(tmp_path, result.session_id)
    assert frame["image_tokens"].tolist() == [expected]
    from nbagent.store.sessions import SessionStore

    store = SessionStore(tmp_path)
    try:
        (info,) = [s for s in store.list() if s.id == result.session_id]
        assert info.image_tokens == expected and store.load(result.session_id).image_tokens == expected
    finally:
        store.close()
    by_turn = nbagent.stats(tmp_path, by="turn")
    assert by_turn["image_tokens"].tolist() == [expected] and by_turn.attrs["image_tokens"] == expected
