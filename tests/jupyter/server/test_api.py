"""REST under /nbagent/api/: sessions, messages, the @ picker, memory, settings."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError

from nbagent.memory.entries import ProjectMemory
from nbagent.store import SessionStore
from nbagent.testing.replies import Reply

pytestmark = pytest.mark.process


async def test_sessions_create_list_fork_delete(api, jp_root_dir):
    assert not (jp_root_dir / ".nbagent").exists(), "the server opens nothing before the first request"
    assert (await api("GET", "sessions"))["sessions"] == []
    created = await api("POST", "sessions")
    listed = (await api("GET", "sessions"))["sessions"]
    assert [s["id"] for s in listed] == [created["id"]]
    assert listed[0]["open"] is False and listed[0]["busy"] is False

    fork = await api("POST", "sessions", created["id"], "fork")
    assert fork["parent_id"] == created["id"]
    assert {s["id"] for s in (await api("GET", "sessions"))["sessions"]} == {created["id"], fork["id"]}

    await api("DELETE", "sessions", created["id"])
    assert [s["id"] for s in (await api("GET", "sessions"))["sessions"]] == [fork["id"]]
    with SessionStore(jp_root_dir) as store:  # gone from the database itself
        assert [s.id for s in store.list()] == [fork["id"]]


async def test_unknown_session_is_404(api):
    for method, path in (("GET", ("sessions", "nosuchsession")), ("DELETE", ("sessions", "nosuchsession")),
                         ("GET", ("sessions", "nosuchsession", "messages")),
                         ("POST", ("sessions", "nosuchsession", "fork"))):
        with pytest.raises(HTTPClientError) as err:
            await api(method, *path)
        assert err.value.code == 404, (method, path)


async def test_messages_of_a_session_after_a_turn(api, connect, model):
    model.enqueue(Reply(text="Hello there."))
    sid = (await api("POST", "sessions"))["id"]
    client = await connect(sid)
    await client.until("snapshot")
    await client.send(type="prompt", text="Say hello")
    await client.until("turn_end")
    rows = (await api("GET", "sessions", sid, "messages"))["messages"]
    assert [(r["message"]["role"], r["message"]["content"]) for r in rows] == [
        ("user", "Say hello"), ("assistant", "Hello there.")]
    assert [r["idx"] for r in rows] == [0, 1]


async def test_picker_ranks_a_path_prefix_first(api, jp_root_dir):
    files = ["src/app.py", "src/util/io.py", "lib/src_helpers.py", "docs/mysrc.md", "tests/test_src.py",
             "build/src/generated.py", "README.md"]
    for f in files:
        (jp_root_dir / f).parent.mkdir(parents=True, exist_ok=True)
        (jp_root_dir / f).write_text("x\n")
    (jp_root_dir / ".gitignore").write_text("build/\n")
    picked = (await api("GET", "files", params={"q": "src/"}))["files"]
    assert picked[:2] == ["src/app.py", "src/util/io.py"], picked
    assert "build/src/generated.py" not in picked, "ignored files stay out of the picker"
    name_first = (await api("GET", "files", params={"q": "src"}))["files"]
    assert name_first[:2] == ["src/app.py", "src/util/io.py"]
    assert set(name_first[2:]) == {"lib/src_helpers.py", "docs/mysrc.md", "tests/test_src.py"}
    assert (await api("GET", "files", params={"q": "src", "limit": "1"}))["files"] == ["src/app.py"]
    with pytest.raises(HTTPClientError) as err:
        await api("GET", "files", params={"q": "x", "limit": "many"})
    assert err.value.code == 400


async def test_memory_list_and_forget(api, jp_root_dir):
    with SessionStore(jp_root_dir) as store:
        memory = ProjectMemory(store.db)
        memory.remember("command", "Tests use pytest with asyncio_mode=auto")
        memory.remember("fact", "The data lives in data/raw")
    entries = (await api("GET", "memory"))["entries"]
    assert sorted(e["text"] for e in entries) == ["Tests use pytest with asyncio_mode=auto",
                                                  "The data lives in data/raw"]
    removed = (await api("POST", "memory", "forget", body={"text": "data/raw"}))["removed"]
    assert [e["text"] for e in removed] == ["The data lives in data/raw"]
    assert [e["text"] for e in (await api("GET", "memory"))["entries"]] == ["Tests use pytest with asyncio_mode=auto"]
    with pytest.raises(HTTPClientError) as err:
        await api("POST", "memory", "forget", body={"text": "  "})
    assert err.value.code == 400


async def test_settings_get_put_and_validation(api, jp_fetch):
    settings = await api("GET", "settings")
    assert settings["approval"] is None and settings["model"] is None
    assert "ask" in settings["available"]["approval"] and "git" in settings["available"]["toolsets"]
    changed = await api("PUT", "settings", body={"approval": "auto", "toolsets": ["git"], "model": "m1"})
    assert (changed["approval"], changed["toolsets"], changed["model"]) == ("auto", ["core", "git"], "m1")
    assert (await api("GET", "settings"))["approval"] == "auto"
    for bad in ({"approval": "yolo"}, {"toolsets": ["nope"]}, {"colour": "red"}, {"model": 3}):
        with pytest.raises(HTTPClientError) as err:
            await api("PUT", "settings", body=bad)
        assert err.value.code == 400, bad
        assert json.loads(err.value.response.body)["message"]
    for raw in ("not json", "[1, 2]"):
        with pytest.raises(HTTPClientError) as err:
            await jp_fetch("nbagent", "api", "settings", method="PUT", body=raw)
        assert err.value.code == 400, raw
    assert (await api("GET", "settings"))["approval"] == "auto", "a refused change changes nothing"


async def test_memory_rows_search_and_forget_by_id(api, jp_root_dir, monkeypatch):
    monkeypatch.setenv("NBAGENT_MEMORY_EMBEDDINGS", "off")
    with SessionStore(jp_root_dir) as store:
        memory = ProjectMemory(store.db)
        memory.remember("decision", "Deploys go out from the release branch.", tags=("deploy",))
        memory.remember("fact", "The <b>data</b> lives in data/raw")
    rows = (await api("GET", "memory"))["rows"]
    assert {r["category"] for r in rows} == {"decision", "fact"} and any(r["tags"] == "deploy" for r in rows)
    hits = (await api("GET", "memory", "search", params={"q": "release branch deploys"}))["hits"]
    assert hits[0]["category"] == "decision" and hits[0]["score"] > 1 and "decision 0.10" in hits[0]["why"]
    removed = (await api("POST", "memory", "forget", body={"id": hits[0]["id"]}))["removed"]
    assert [r["text"] for r in removed] == ["Deploys go out from the release branch."]
    assert [r["text"] for r in (await api("GET", "memory"))["rows"]] == ["The <b>data</b> lives in data/raw"]
    with pytest.raises(HTTPClientError) as info:
        await api("GET", "memory", "search", params={"q": " "})
    assert info.value.code == 400
