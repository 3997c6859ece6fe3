"""The server's attached-context routes: the active notebook's history offered to a session, the chips' list
and buttons, through a real Jupyter server."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError

from nbagent.testing.replies import Reply

pytestmark = pytest.mark.process

NOTEBOOK = {
    "nbformat": 4, "nbformat_minor": 5, "metadata": {},
    "cells": [
        {"cell_type": "code", "execution_count": 1, "id": "a", "metadata": {}, "source": "x = 6 * 7\nx",
         "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                      "data": {"text/plain": "42"}}]},
        {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "notes"},
        {"cell_type": "code", "execution_count": 2, "id": "c", "metadata": {}, "source": "x / 0",
         "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                      "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m Traceback", "----> 1 x / 0"]}]},
        {"cell_type": "code", "execution_count": None, "id": "d", "metadata": {}, "source": "never run",
         "outputs": []},
    ],
}


async def test_the_active_notebook_is_offered_and_its_error_reaches_the_first_request(api, connect, model,
                                                                                     jp_root_dir):
    (jp_root_dir / "analysis.ipynb").write_text(json.dumps(NOTEBOOK))
    sid = (await api("POST", "sessions"))["id"]
    model.enqueue(Reply(text="Use a non-zero divisor."))
    client = await connect(sid)
    await client.until("snapshot")
    # The panel sends the active notebook with the prompt: its history comes along, no tool call needed.
    await client.send(type="prompt", text="fix the error", context={"notebook": "analysis.ipynb"})
    note = await client.until("context_note")
    assert note["source"] == "notebook" and note["change"] == "attached"
    await client.until("turn_end")
    first = model.requests[-1].messages
    assert first[0]["role"] == "system" and "ZeroDivisionError" in first[0]["content"]
    assert "Out[1]: 42" in first[0]["content"] and "never run" not in first[0]["content"]
    assert "\x1b" not in first[0]["content"]
    chips = (await api("GET", "sessions", sid, "context"))["sources"]
    assert [(c["name"], c["status"], c["serial"]) for c in chips] == [("notebook", "ok", 1)]
    assert chips[0]["summary"].startswith("Notebook analysis.ipynb")
    offered = await api("POST", "sessions", sid, "context", "notebook", body={"path": "analysis.ipynb"})
    assert offered["attached"] and offered["status"] == "same"
    # The chip's buttons: mute, then remove (declined: a later offer does not bring it back).
    muted = await api("POST", "sessions", sid, "context", "notebook", "mute")
    assert muted["source"]["status"] == "muted"
    await api("POST", "sessions", sid, "context", "notebook", "remove")
    again = await api("POST", "sessions", sid, "context", "notebook", body={"path": "analysis.ipynb"})
    assert again == {"attached": False, "reason": "declined"}


async def test_bad_offers_are_refused_clearly(api, jp_root_dir):
    sid = (await api("POST", "sessions"))["id"]
    for body, status in (({"path": "../outside.ipynb"}, 400), ({"path": "missing.ipynb"}, 404),
                         ({"path": 3}, 400)):
        with pytest.raises(HTTPClientError) as caught:
            await api("POST", "sessions", sid, "context", "notebook", body=body)
        assert caught.value.code == status
    with pytest.raises(HTTPClientError) as caught:
        await api("POST", "sessions", sid, "context", "nothing", "mute")
    assert caught.value.code == 404
