"""Warm the first turn in the background: import the engine and the openai SDK before they are needed.

A fresh process spends 2-2.5 s importing before its first model request can leave, most of it in
the openai SDK (which loads every type module on first use). ``%load_ext nbagent`` and the server
extension call ``start()``: a daemon thread does those imports while the user types, so the first
``%agent`` only pays for what is left. It never delays its caller (it returns at once), and a
failure here only means the first turn imports the usual way. Whoever builds the first agent calls
``settle()`` first, so that the engine is never imported by two threads at once.
"""

from __future__ import annotations

import importlib
import os
import threading

from ..render.redaction import logger

MODULES = (
    "openai", "pydantic", "nbagent.engine.agent", "nbagent.engine.runtime", "nbagent.engine.loop", "nbagent.model.factory",
    "nbagent.model.chat", "nbagent.model.responses", "nbagent.tools", "nbagent.store.sessions",
)
"""Not httpx: the SDK brings the HTTP library it uses (recent ones their own fork, httpx2), and nbagent
never imports httpx itself; importing it anyway took 85-90 ms of a warm-up the first turn may wait for."""
_started: threading.Thread | None = None
_lock = threading.Lock()
_done = threading.Event()


def start() -> threading.Thread:
    """Start warming once per process (later calls return the same thread)."""
    global _started
    with _lock:
        if _started is None:
            _started = threading.Thread(target=_warm, name="nbagent-warmup", daemon=True)
            _started.start()
        return _started


def wait(timeout: float | None = None) -> bool:
    """Block until warming finished (True) or ``timeout`` passed (False)."""
    return _done.wait(timeout)


def settle() -> None:
    """Before importing the engine on another thread: let a running warm-up finish first.

    Two threads importing modules that import each other (openai and httpx do) can hand one of
    them a partially initialised module ("partially initialized module 'httpx' has no attribute
    'URL'"). Waiting costs nothing extra: the warm-up is doing the imports the caller needs.
    """
    if _started is not None:
        _done.wait()


def _warm() -> None:
    try:
        for name in MODULES:
            importlib.import_module(name)
        _touch_openai_resources()
        from ..tools import builtin_toolsets

        builtin_toolsets()
    except Exception:  # warming is an optimisation: the first turn imports what is missing itself
        logger("nbagent").debug("warm-up failed", exc_info=True)
    finally:
        _done.set()


def _touch_openai_resources() -> None:
    """The SDK builds its resources and their type modules lazily, on first attribute access: those of
    the wire protocol the first turn will speak (Chat Completions unless NBAGENT_API says Responses;
    a turn asking for the other one in its arguments imports it then, about 80 ms)."""
    import openai

    client = openai.AsyncOpenAI(api_key="warm-up", base_url="http://127.0.0.1:9/v1")
    if os.environ.get("NBAGENT_API", "").strip() == "responses":
        type(client.responses)
        import openai.types.responses  # noqa: F401
    else:
        type(client.chat.completions)
        import openai.types.chat  # noqa: F401
