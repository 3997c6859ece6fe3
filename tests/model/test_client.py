"""The OpenAI client per agent: one TLS context per process, still following SSL_CERT_FILE."""

from __future__ import annotations

import ssl

from nbagent.config import AgentConfig
from nbagent.model.openai_common import make_client


def _context(client) -> ssl.SSLContext:
    return client._client._transport._pool._ssl_context


def test_clients_share_the_process_tls_context_but_keep_their_settings(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    config = AgentConfig.load(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", local="off",
                              request_timeout=12.0)
    first, second = make_client(config), make_client(config)
    assert _context(first) is _context(second)
    assert _context(first).verify_mode == ssl.CERT_REQUIRED and _context(first).check_hostname
    assert first.timeout == 12.0 and first.max_retries == 0 and first._client.follow_redirects


def test_a_ca_bundle_named_in_the_environment_gets_its_own_context(monkeypatch):
    import certifi

    config = AgentConfig.load(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", local="off")
    plain = _context(make_client(config))
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    bundled = _context(make_client(config))
    assert bundled is not plain and bundled.cert_store_stats()["x509_ca"] > 0


def test_after_send_runs_once_when_the_body_is_out_and_before_the_answer_is_read():
    """The loop's turn-start commits (nbagent.model.base.AFTER_SEND) run on the event loop once the request
    is written, not before: the hook hands them to the body's end. Once per setting, not per request."""
    import asyncio

    from nbagent.model.base import AFTER_SEND
    from nbagent.model.openai_common import open_chunk_stream
    from nbagent.testing import ScriptedServer

    with ScriptedServer("first answer", "second answer") as server:
        async def main() -> list[str]:
            client = make_client(AgentConfig(base_url=server.url, api_key="sk-test"))
            seen: list[str] = []
            AFTER_SEND.set(lambda: seen.append(f"ran after {len(server.requests)} request(s) arrived"))
            params = {"model": "m", "messages": [{"role": "user", "content": "x" * 200_000}], "stream": True}
            chunks = await open_chunk_stream(client, params)
            seen.append("answer open")
            async for _ in chunks:
                pass
            async for _ in await open_chunk_stream(client, params):  # a second request: not again
                pass
            await client.close()
            return seen

        seen = asyncio.run(main())
    assert seen[1] == "answer open" and len(seen) == 2, seen
    assert seen[0].startswith("ran after")
    assert len(server.requests) == 2 and len(server.requests[0].raw) > 200_000  # the whole body went out
