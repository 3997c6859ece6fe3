"""The client's editor as the file tools' source of text: ``fs/read_text_file``, so read_file sees unsaved edits.

Offered only when the client says it can (``clientCapabilities.fs.readTextFile``). ``read_file`` runs on a
worker thread; it asks the client through the connection's own loop and waits for the answer. A client that
does not answer in time, or refuses (a file it does not hold), leaves the tool to read the file on disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..render.redaction import logger

log = logger("nbagent.acp")

READ_TIMEOUT = 10.0
"""Seconds a read waits for the client before reading the file on disk instead."""


class EditorText:
    """``path -> text or None`` (``tools.files.EDITOR_TEXT``) for one ACP session."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop, session_id: str):
        self.client = client
        self.loop = loop
        self.session_id = session_id

    def __call__(self, path: Path) -> str | None:
        if _on_loop(self.loop):  # never block the loop that would carry the answer
            return None
        future = asyncio.run_coroutine_threadsafe(
            self.client.read_text_file(session_id=self.session_id, path=str(path)), self.loop)
        try:
            return future.result(READ_TIMEOUT).content
        except Exception as exc:  # the client refused or is slow: the file as saved
            future.cancel()
            log.debug("fs/read_text_file %s: %s", path, exc)
            return None


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
