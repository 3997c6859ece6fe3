"""The sandboxed kernelspec under a real Jupyter server (issue 35): the server starts "Python 3 (nbagent
sandbox)" as any kernel, over TCP, and the kernel inside has no network (its own namespace, reached
through the launcher's relay to ZeroMQ's ipc sockets), but the hosts the user allowed, through the proxy."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest

from .kernel_run import run_in_kernel
from .live_helpers import write_notebook
from nbagent.workspace import sandbox as sb
from nbagent.workspace.sandbox_kernel import KERNEL_NAME, kernel_json

pytestmark = [pytest.mark.integration, pytest.mark.kernel,
              pytest.mark.skipif(sb.current().mechanism != "bubblewrap", reason="bubblewrap does not work here")]


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"allowed host says hi"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def sandbox_kernelspec(jp_data_dir):
    folder = jp_data_dir / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps(kernel_json()))


@pytest.fixture
def host_servers(monkeypatch):
    """An HTTP server the user allowed (NBAGENT_SANDBOX_HOSTS) and a bare TCP listener nobody allowed."""
    allowed = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=allowed.serve_forever, daemon=True).start()
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(5)
    monkeypatch.setenv("NBAGENT_SANDBOX_HOSTS", f"127.0.0.1:{allowed.server_address[1]}")
    yield allowed.server_address[1], other.getsockname()[1]
    allowed.shutdown()
    allowed.server_close()
    other.close()


async def test_a_server_started_sandbox_kernel_has_no_network_but_the_allowed_hosts(
        sandbox_kernelspec, host_servers, jp_serverapp, jp_root_dir, jp_fetch):
    allowed, other = host_servers
    write_notebook(jp_root_dir, "n.ipynb", [("code", "x = 1")])
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": "n.ipynb", "name": "n.ipynb", "type": "notebook", "kernel": {"name": KERNEL_NAME}}))
    kernel_id = json.loads(response.body)["kernel"]["id"]
    code = (
        "import socket, urllib.request\n"
        "open('inside.txt', 'w').write('ok')\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {other}), timeout=3); print('direct: connected')\n"
        "except OSError as e:\n"
        "    print('direct:', type(e).__name__)\n"
        f"print('proxy:', urllib.request.urlopen('http://127.0.0.1:{allowed}/', timeout=10).read().decode())\n"
        "print('interfaces:', sorted(n for _, n in socket.if_nameindex()))\n"
    )
    printed = await run_in_kernel(jp_serverapp, kernel_id, code)
    assert "direct: connected" not in printed and "direct: " in printed, printed
    assert "proxy: allowed host says hi" in printed, printed
    assert "interfaces: ['lo']" in printed  # a network namespace of its own
    assert (jp_root_dir / "inside.txt").read_text() == "ok"
    again = await run_in_kernel(jp_serverapp, kernel_id, "x = 41\nprint(x + 1)")  # the session keeps working
    assert again.strip() == "42"
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
