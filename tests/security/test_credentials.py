"""Finding 10: credentials in a base URL are never stored, listed or exported."""

from __future__ import annotations

import pytest
from nbagent.render.redaction import public_url
from nbagent.store.sessions import SessionStore

SECRET_URL = "https://alice:s3cr3t@llm.example.org:8443/v1?api-key=k3y#frag"


def test_public_url_drops_user_info_query_and_fragment():
    assert public_url(SECRET_URL) == "https://llm.example.org:8443/v1"
    assert public_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert public_url("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert public_url(None) == "" and public_url("http://x:99999999/") == "(invalid URL)"


@pytest.mark.process
def test_a_session_never_stores_the_credentials_of_its_base_url(make_agent, tmp_path):
    agent = make_agent("hello", base_url=SECRET_URL, api_key="sk-test")
    agent.run("hi")
    session_id = agent.session_id
    agent.close()
    with SessionStore(tmp_path) as store:
        listed = store.list()
        exported = store.export_json(session_id)
    on_disk = b"".join(p.read_bytes() for p in (tmp_path / ".nbagent").rglob("*") if p.is_file())
    text = repr(listed) + exported + on_disk.decode("latin-1")
    assert "s3cr3t" not in text and "k3y" not in text and "alice" not in text
    assert "https://llm.example.org:8443/v1" in exported
