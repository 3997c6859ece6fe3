"""Inside a bubblewrap sandbox: ``python -I -S net_relay.py SOCKET -- argv...``.

The sandbox has a network namespace of its own, with nothing but loopback. This relay listens on
127.0.0.1 there and relays every connection to SOCKET, the Unix socket of nbagent's proxy bound in
from outside (nbagent.workspace.net_proxy), points ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY``
at itself, runs ``argv`` as its child and ends with the child's status. It holds one connection to
the proxy open while it lives, which keeps the process's gate open.

Run by path with ``-I -S`` (no site, no nbagent import): the standard library only, so it starts in
a few milliseconds and no package of the workspace can be imported in its place.
"""

import os
import signal
import socket
import sys
import threading

HOLD = b"NBAGENT-HOLD\n"  # the same as net_proxy.HOLD


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _relay(conn: socket.socket, path: str) -> None:
    up = socket.socket(socket.AF_UNIX)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        up.close()
        return
    back = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    back.start()
    _pump(conn, up)
    back.join()
    conn.close()
    up.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_relay, args=(conn, path), daemon=True).start()


def main(argv: list) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -I -S net_relay.py SOCKET -- COMMAND...", file=sys.stderr)
        return 2
    path, command = argv[0], argv[2:]
    holder = socket.socket(socket.AF_UNIX)
    holder.connect(path)
    holder.sendall(HOLD)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = "http://127.0.0.1:%d" % listener.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        os.environ[name] = url
    for name in ("NO_PROXY", "no_proxy"):
        os.environ.pop(name, None)
    pid = os.fork()
    if pid == 0:
        listener.close()
        holder.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print("nbagent sandbox: cannot run %s: %s" % (command[0], exc), file=sys.stderr)
            os._exit(127)
    # the child's signals are its own: the relay outlives a TERM to the group only as long as the child
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda number, frame, pid=pid: os.kill(pid, number))
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
