"""Code run in a kernel of the test's Jupyter server (pytest-jupyter's ``jp_serverapp``), through a client
of its own: what the code printed, its errors' tracebacks included."""

from __future__ import annotations

import asyncio
import time


async def run_in_kernel(jp_serverapp, kernel_id: str, code: str, timeout: float = 60) -> str:
    """Run ``code`` in the kernel once it is ready and return what it printed (stdout, stderr, tracebacks)."""
    client = jp_serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=timeout)
        msg_id = client.execute(code)
        out, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = await asyncio.wait_for(client.get_iopub_msg(), 5)
            except asyncio.TimeoutError:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                out.append("\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out)
        raise AssertionError(f"the kernel did not finish in {timeout} s: {''.join(out)}")
    finally:
        client.stop_channels()
