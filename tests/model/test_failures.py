"""Scripted failures surface through the real openai client as its own exception types."""

from __future__ import annotations

import threading
import time

import openai
import pytest
from openai import OpenAI

from nbagent.testing.replies import BreakStream, Fail, Reply, Slow, Stall, context_overflow
from nbagent.testing.server import ScriptedServer

USER = [{"role": "user", "content": "hi"}]

STATUS_ERRORS = [
    (401, openai.AuthenticationError, "invalid_api_key", "Incorrect API key provided: sk-***1234"),
    (404, openai.NotFoundError, "model_not_found", "The model `gpt-x` does not exist"),
    (429, openai.RateLimitError, "rate_limit_exceeded", "Rate limit reached for gpt-x"),
    (500, openai.InternalServerError, None, "The server had an error"),
    (503, openai.InternalServerError, None, "overloaded"),
    (400, openai.BadRequestError, "context_length_exceeded", "maximum context length is 8192 tokens"),
]


def call_api(client: OpenAI, api: str, stream: bool):
    if api == "chat":
        result = client.chat.completions.create(model="gpt-x", messages=USER, stream=stream)
    else:
        result = client.responses.create(model="gpt-x", input="hi", stream=stream)
    return list(result) if stream else result


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("status", "error", "code", "words"), STATUS_ERRORS)
def test_each_status_becomes_its_openai_error(server, client, api, status, error, code, words):
    server.enqueue(Fail(status))
    with pytest.raises(error) as caught:
        call_api(client, api, stream=True)
    assert caught.value.status_code == status
    assert caught.value.code == code
    assert words in caught.value.message
    server.assert_complete()


async def test_async_client_gets_the_same_error_types(server, aclient):
    server.enqueue(context_overflow(4096, 5000), Fail(429, "slow down", code="rate_limit_exceeded"))
    with pytest.raises(openai.BadRequestError, match="maximum context length is 4096 tokens"):
        await aclient.chat.completions.create(model="m", messages=USER, stream=True)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        await aclient.responses.create(model="m", input="hi", stream=True)


def test_retry_after_is_honoured_by_the_sdk_retry(server):
    server.enqueue(Fail(429, retry_after=0.05), Fail(503, retry_after=0.05), "finally")
    with OpenAI(base_url=server.url, api_key="k", max_retries=2) as client:
        completion = client.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "finally"
    assert len(server.requests) == 3
    server.assert_complete()


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_break_stream_fails_mid_stream_after_some_chunks(server, client, api):
    server.enqueue(BreakStream(after_chunks=3, reply=Reply(text="a long answer that never ends")))
    if api == "chat":
        stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    else:
        stream = client.responses.create(model="m", input="hi", stream=True)
    received = []
    with pytest.raises(openai.APIConnectionError):
        for event in stream:
            received.append(event)
    assert len(received) == 3


def test_break_in_a_non_streamed_answer_is_a_connection_error(server, client):
    server.enqueue(BreakStream())
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=USER)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_stall_before_the_answer_trips_the_client_timeout(server, api):
    server.enqueue(Stall(5))
    with OpenAI(base_url=server.url, api_key="k", max_retries=0, timeout=0.3) as client:
        start = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            call_api(client, api, stream=True)
    assert time.monotonic() - start < 2


def test_stall_mid_stream_trips_the_read_timeout(server):
    server.enqueue(Stall(5, after_chunks=2, reply=Reply(text="starts then hangs")))
    with OpenAI(base_url=server.url, api_key="k", max_retries=0, timeout=0.3) as client:
        stream = client.chat.completions.create(model="m", messages=USER, stream=True)
        received = []
        with pytest.raises(openai.APITimeoutError):
            for chunk in stream:
                received.append(chunk)
    assert len(received) == 2


def test_a_patient_client_gets_the_reply_after_the_stall(server, client):
    server.enqueue(Stall(0.2, reply=Reply(text="late")))
    assert client.chat.completions.create(model="m", messages=USER).choices[0].message.content == "late"


def test_slow_spaces_out_the_chunks(server, client):
    server.enqueue(Slow(0.05, Reply(text="12345678")))  # chunk_size 4: 5 events before [DONE]
    start = time.monotonic()
    chunks = list(client.chat.completions.create(model="m", messages=USER, stream=True))
    assert len(chunks) == 4 and time.monotonic() - start >= 0.25


def test_an_empty_queue_fails_once_and_is_reported(server):
    with OpenAI(base_url=server.url, api_key="k", max_retries=2) as client:
        with pytest.raises(openai.InternalServerError, match="no reply scripted"):
            client.chat.completions.create(model="m", messages=USER)
    assert len(server.requests) == 1  # x-should-retry: false stops the SDK's retries
    with pytest.raises(AssertionError, match="after the script ran out"):
        server.assert_complete()


def test_unused_replies_fail_assert_complete():
    with ScriptedServer("never asked for") as server:
        with pytest.raises(AssertionError, match="1 scripted replies were never requested"):
            server.assert_complete()


def test_close_wakes_a_stalled_answer_at_once():
    server = ScriptedServer(Stall(30)).start()
    with OpenAI(base_url=server.url, api_key="k", max_retries=0, timeout=10) as client:
        start = time.monotonic()
        closer = threading.Timer(0.2, server.close)
        closer.start()
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="m", messages=USER)
    assert time.monotonic() - start < 3
