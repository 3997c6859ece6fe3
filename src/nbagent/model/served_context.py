"""The context a local server really serves, asked of the server: Ollama and llama.cpp's server.

Ollama serves a few thousand tokens by default whatever the model was trained for, and cuts a longer
request from the start without a word: the instructions and tools are what gets lost. llama.cpp's
server runs with the ``--ctx-size`` it was started with. Both say what they serve: llama.cpp in
``GET /props`` (``default_generation_settings.n_ctx``), Ollama in ``GET /api/ps`` (the context each
loaded model was loaded with; ``POST /api/generate`` without a prompt loads one, as the first request
would) and ``POST /api/show`` (a Modelfile's ``num_ctx``). Only servers on this machine or a private
network are asked (a hosted API has neither endpoint). Both also say whether the model takes images
(Ollama's ``capabilities`` list has "vision"; llama.cpp's ``modalities.vision`` is true when a
multimodal projector is loaded): nbagent.engine.vision reads it. The answer is not kept across agents: a
server restarted with a larger context is seen at the next turn (the runtime asks at each turn's start
while the server answers, and never again once it did not).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from ..render.redaction import logger

log = logger("nbagent.model")

PROBE_TIMEOUT = 3.0
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.M)


@dataclass(frozen=True)
class ServedContext:
    tokens: int
    server: str
    """"ollama" or "llama.cpp"."""
    model: str
    vision: bool | None = None
    """Whether the server says this model takes images (Ollama's ``capabilities``, llama.cpp's
    ``modalities``); None when it does not say."""

    def fix(self, needed: int) -> str:
        """How to serve a context of at least ``needed`` tokens, for this server."""
        size = suggested_size(needed)
        if self.server == "ollama":
            return (f"start Ollama with OLLAMA_CONTEXT_LENGTH={size}, or give the model a larger context in a "
                    f"Modelfile (FROM {self.model} / PARAMETER num_ctx {size}, then ollama create)")
        return f"restart llama-server with --ctx-size {size}"


def suggested_size(needed: int) -> int:
    """A power of two with room for the conversation to grow: at least twice ``needed``, at least 8,192."""
    size = 8192
    while size < 2 * needed:
        size *= 2
    return size


def is_local(base_url: str | None) -> bool:
    """True for a server on this machine or a private network (where Ollama and llama.cpp run)."""
    host = (urlparse(base_url).hostname or "") if base_url else ""
    if host == "localhost" or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


async def served_context(client: Any, base_url: str | None, model: str) -> ServedContext | None:
    """What the server at ``base_url`` serves ``model`` with; None when it does not say (or is not local)."""
    if not is_local(base_url) or not model:
        return None
    return await _probe(client, re.sub(r"/v1/?$", "", (base_url or "").rstrip("/")), model)


async def _probe(client: Any, root: str, model: str) -> ServedContext | None:
    props = await _json(client, "GET", f"{root}/props")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            modalities = props.get("modalities")
            vision = modalities.get("vision") if isinstance(modalities, dict) else None
            return ServedContext(n_ctx, "llama.cpp", model, vision if isinstance(vision, bool) else None)
    show = await _json(client, "POST", f"{root}/api/show", {"model": model})
    if not isinstance(show, dict):
        return None
    loaded = await _ollama_loaded(client, root, model)
    if loaded is None:
        await _json(client, "POST", f"{root}/api/generate", {"model": model})  # loads it, as a request would
        loaded = await _ollama_loaded(client, root, model)
    if loaded is None:
        match = _NUM_CTX.search(str(show.get("parameters") or ""))
        loaded = int(match.group(1)) if match else None
    capabilities = show.get("capabilities")
    vision = "vision" in capabilities if isinstance(capabilities, list) else None
    return ServedContext(loaded, "ollama", model, vision) if loaded else None


async def _ollama_loaded(client: Any, root: str, model: str) -> int | None:
    ps = await _json(client, "GET", f"{root}/api/ps")
    for entry in (ps.get("models") if isinstance(ps, dict) else None) or ():
        names = {entry.get("name"), entry.get("model")} if isinstance(entry, dict) else set()
        if model in names or f"{model}:latest" in names:
            size = entry.get("context_length")
            return size if isinstance(size, int) and size > 0 else None
    return None


async def _json(client: Any, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    """The JSON answer through the model's own SDK client (its connection pool and TLS), or None."""
    # cast_to=object: the SDK hands back the parsed JSON (or the text of another answer). Asking for its
    # HTTP library's Response type instead imported httpx itself (the SDK uses a fork), about a second
    # of a kernel's first %agent on a loaded machine (bench/coldstart.py, issue 41).
    options = {"timeout": PROBE_TIMEOUT}
    try:
        if method == "GET":
            return await client.get(url, cast_to=object, options=options)
        return await client.post(url, cast_to=object, body=body, options=options)
    except Exception as exc:  # not this kind of server, or not reachable: nothing to learn
        log.debug("context probe %s %s: %s", method, url, exc)
        return None
