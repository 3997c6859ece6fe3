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


def start(extra: tuple[str, ...] = ()) -> threading.Thread:
    """Start warming once per process (later calls return the same thread); ``extra``: modules the
    caller's front end imports for its first agent (the kernel's bridge), imported after the rest."""
    global _started
    with _lock:
        if _started is None:
            _started = threading.Thread(target=_warm, args=(extra,), name="nbagent-warmup", daemon=True)
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


def _warm(extra: tuple[str, ...] = ()) -> None:
    try:
        for name in (*MODULES, *extra):
            importlib.import_module(name)
        _touch_openai_resources()
        from ..tools import builtin_toolsets

        builtin_toolsets()
        _first_turn_once()
    except Exception:  # warming is an optimisation: the first turn imports what is missing itself
        logger("nbagent").debug("warm-up failed", exc_info=True)
    finally:
        _done.set()


def _first_turn_once() -> None:
    """What a process's first turn did once, on its own thread and holding the interpreter while the
    first request was being built and sent (a kernel's first %agent took 818 ms, bench/coldstart.py;
    profiled with yappi, issue 41): the process's TLS context, the secret patterns the turn's trace is
    scrubbed with (detect-secrets and what it imports), and the price snapshot the first usage reads."""
    from ..model.cost import cost_of
    from ..model.openai_common import shared_ssl_context
    from ..render.redaction import scrub

    shared_ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    scrub("warm-up")
    cost_of("gpt-4.1-mini", "openai", 1, 1)


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
