"""``POST /nbagent/api/complete``: an inline completion for the JupyterLab editor, streamed.

Body ``{"path", "cell_id"?, "prefix", "suffix", "model"?, "enabled"?}`` (``model`` and ``enabled``
"on" are the extension's settings, over the server's configuration). The answer is newline-delimited
JSON: ``{"text": ...}`` pieces as the model sends them, then ``{"done": true}`` (or ``{"error": ...}``);
409 ``{"off": reason}`` when completions are off here. The server adds what only it knows: the
notebook's other cells (as it holds them: the live document or the open view) and the names of the
kernel that runs the notebook, read there by one silent probe line (nbagent.jupyter.kernel.probe,
action "names") and kept a few seconds. The editor aborts the request on the next keystroke; the
handler then cancels the stream, which closes the model's HTTP request at once.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ...complete.completer import Completer, CompletionsOff
from ...complete.prompt import CompletionRequest
from ...errors import ConfigError, ModelError
from ...render.redaction import logger
from .base import BaseHandler
from .completions import CompletionService

log = logger("nbagent.server")
MAX_TEXT = 100_000

class CompleteHandler(BaseHandler):
    _task: "asyncio.Task | None" = None

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = _checked(self.json_body())
        service: CompletionService = self.app.completions
        try:
            completer = service.completer()
            choice = await completer.achoice(model=body.get("model") or None, force_on=body.get("enabled") == "on")
        except CompletionsOff as exc:
            return self.reply({"off": str(exc)}, status=409)
        except ConfigError as exc:
            return self.reply({"off": str(exc)}, status=409)
        request = await service.request(body)
        self.set_header("Content-Type", "application/x-ndjson; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self._task = asyncio.ensure_future(self._send(completer, request, choice))
        try:
            await self._task
        except (asyncio.CancelledError, StreamClosedError):
            pass  # the editor went away (its next keystroke): the model request is closed already

    def on_connection_close(self) -> None:
        if self._task is not None:
            self._task.cancel()  # stops the model's stream where it is

    async def _send(self, completer: Completer, request: CompletionRequest, choice: Any) -> None:
        pieces = completer.stream(request, choice)
        try:
            async for text in pieces:
                self.write(json.dumps({"text": text}) + "\n")
                await self.flush()
            self.write('{"done": true}\n')
        except ModelError as exc:
            self.write(json.dumps({"error": str(exc)}) + "\n")
        except Exception as exc:  # noqa: BLE001 - the openai SDK's errors: the editor shows nothing
            log.info("nbagent: completion failed: %s", exc)
            self.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        finally:
            await pieces.aclose()
        self.finish()


def _checked(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise web.HTTPError(400, 'give {"path", "prefix", "suffix", "cell_id"?}')
    for key in ("path", "prefix", "suffix"):
        if not isinstance(body.get(key), str):
            raise web.HTTPError(400, f"{key} must be a string")
        if len(body[key]) > MAX_TEXT:
            raise web.HTTPError(413, f"{key} is longer than {MAX_TEXT:,} characters")
    for key in ("cell_id", "model", "enabled"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise web.HTTPError(400, f"{key} must be a string")
    return body


ROUTES = [(r"/nbagent/api/complete/?", CompleteHandler)]
