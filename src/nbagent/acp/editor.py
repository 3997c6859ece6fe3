"""The client's editor as the file tools' text: ``fs/read_text_file`` and ``fs/write_text_file``.

Each is offered only when the client says it can (``clientCapabilities.fs``). A read gives read_file what the
editor holds, unsaved changes included; a write puts an edit into the editor's buffer (the file tools then
check the file on disk and write it themselves when the editor did not save it: nbagent.tools.files). The
tools run on a worker thread; they ask the client through the connection's own loop and wait for the
answer. A client that does not answer in time, or refuses (a file it does not hold), leaves the tool to
the file on disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..render.redaction import logger

log = logger("nbagent.acp")

READ_TIMEOUT = 10.0
"""Seconds a read or a write waits for the client before the tool uses the file on disk instead."""


class Editor:
    """``read``: ``path -> text or None`` (``tools.files.EDITOR_TEXT``); ``write``: ``(path, text) -> bool``
    (``tools.files.EDITOR_WRITE``), for one ACP session."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop, session_id: str):
        self.client = client
        self.loop = loop
        self.session_id = session_id

    def read(self, path: Path) -> str | None:
        answer = self._ask("fs/read_text_file", path,
                           lambda: self.client.read_text_file(session_id=self.session_id, path=str(path)))
        content = getattr(answer, "content", None)
        return content if isinstance(content, str) else None

    def write(self, path: Path, text: str) -> bool:
        return self._ask("fs/write_text_file", path, lambda: self.client.write_text_file(
            session_id=self.session_id, path=str(path), content=text)) is not None

    def _ask(self, method: str, path: Path, request) -> Any:
        if _on_loop(self.loop):  # never block the loop that would carry the answer
            return None
        future = asyncio.run_coroutine_threadsafe(request(), self.loop)
        try:
            answer = future.result(READ_TIMEOUT)
        except Exception as exc:  # the client refused or is slow: the file on disk
            future.cancel()
            log.debug("%s %s: %s", method, path, exc)
            return None
        return answer if answer is not None else True  # a write's answer may be empty


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
