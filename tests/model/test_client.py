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
