"""The scripted server's own surface: recording, models, routing, lifetime."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from openai import OpenAI

from nbagent.testing.replies import Reply
from nbagent.testing.server import ScriptedServer


def test_models_lists_the_configured_model():
    with ScriptedServer(model="smol") as server:
        with OpenAI(base_url=server.url, api_key="k") as client:
            assert [m.id for m in client.models.list()] == ["smol"]
        assert server.model_requests() == []  # /v1/models takes nothing from the script


def test_requests_are_recorded_with_body_and_headers(server, client):
    server.enqueue("one", "two")
    tools = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}], tools=tools)
    client.responses.create(model="m", input="b", instructions="be brief")
    chat, responses = server.model_requests()
    assert (chat.api, chat.path, chat.method) == ("chat", "/v1/chat/completions", "POST")
    assert chat.body["tools"] == tools and chat.body["messages"][0]["content"] == "a"
    assert chat.headers["authorization"] == "Bearer sk-test-abcdefgh1234"
    assert responses.body["instructions"] == "be brief" and server.last is responses
    assert server.model_requests("responses") == [responses]


def post(url: str, data: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_bad_json_and_unknown_paths_get_openai_style_errors(server):
    server.enqueue("kept for a good request")
    status, body = post(server.url + "/chat/completions", b"{not json")
    assert status == 400 and "could not parse the JSON body" in body["error"]["message"]
    status, body = post(server.url + "/embeddings", b"{}")
    assert status == 404 and body["error"]["code"] == "unknown_url"
    assert server.pending == 1  # bad requests do not use up the script
    status, body = post(server.url + "/chat/completions", json.dumps({"model": "m", "messages": []}).encode())
    assert status == 200 and body["choices"][0]["message"]["content"] == "kept for a good request"


def test_url_needs_a_running_server_and_options_are_checked():
    server = ScriptedServer()
    with pytest.raises(RuntimeError, match="not running"):
        server.url
    with pytest.raises(ValueError, match="chunk_size"):
        ScriptedServer(chunk_size=0)
    with pytest.raises(TypeError, match="cannot script"):
        server.enqueue(42)
    server.close()  # closing a server that never started is harmless


def test_a_closed_server_starts_again_with_its_script():
    server = ScriptedServer(Reply(text="after a restart"))
    with server:
        pass
    with server:
        body = {"model": "m", "messages": []}
        status, answer = post(server.url + "/chat/completions", json.dumps(body).encode())
    assert answer["choices"][0]["message"]["content"] == "after a restart"
    server.assert_complete()


def test_a_burst_of_clients_connecting_at_once_is_served_at_once():
    """64 clients connect together (a batch's agents starting): none waits for a dropped SYN to be
    sent again (a second or more) because the listen backlog was full."""
    import socket
    import threading
    import time

    n = 64
    with ScriptedServer() as server:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        barrier, waits, failures, opened = threading.Barrier(n), [], [], []

        def connect_and_ask():
            barrier.wait()
            started = time.perf_counter()
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=10)
                opened.append(conn)
                conn.sendall(b"GET /v1/models HTTP/1.1\r\nHost: test\r\n\r\n")
                assert conn.recv(64).startswith(b"HTTP/1.1 200")
                waits.append(time.perf_counter() - started)
            except Exception as exc:  # collected: asserted below, in the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=connect_and_ask) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for conn in opened:
            conn.close()
    assert failures == [] and len(waits) == n
    assert max(waits) < 0.9, sorted(waits)[-5:]


def test_the_prompt_cache_counts_the_longest_prefix_any_earlier_prompt_shared():
    """As OpenAI reports it: whole 128-token blocks (512 characters here) of the longest prefix an earlier
    prompt had, nothing under 1,024 tokens; one pass over the request, however many came before."""
    from nbagent.testing.wire_common import PromptCache, openai_cached_tokens

    cache = PromptCache()
    system = "s" * 6000
    first = system + "a" * 3000
    assert cache.shared_chars(first) == 0
    assert cache.shared_chars("z" * 9000) == 0  # another prompt between: the first is still there
    again = system + "a" * 1100 + "b" * 5000
    assert cache.shared_chars(again) == 6656  # 6,000 + 1,100 shared, cut to whole 512-character blocks
    # what the exact shared length would have been reported as, the same
    assert openai_cached_tokens(6656, len(again) // 4) == openai_cached_tokens(7100, len(again) // 4) == 1664
    assert cache.shared_chars(again) == len(again) // 512 * 512  # all of it, but the last partial block
    assert cache.shared_chars("s" * 4095) == 3584  # a prefix of a longer prompt seen before
    assert openai_cached_tokens(3584, 4095 // 4) == 0  # under 1,024 tokens: nothing cached
    assert cache.shared_chars("\ud800 lone surrogate " * 100) == 0  # what json.dumps may pass through
