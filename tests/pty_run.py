"""A command with its stderr on a pseudo-terminal (as in a shell, so progress bars draw) and stdout piped."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios


def run_on_a_terminal(argv: list[str], **options) -> tuple[subprocess.CompletedProcess, str]:
    """Run ``argv`` (``options`` go to subprocess.run); its result and what it wrote on the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a terminal has a size
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=slave, text=True, **options)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side is closed: all of it was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return done, b"".join(chunks).decode(errors="replace")
