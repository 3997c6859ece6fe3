"""Cells for a real ipykernel driven through jupyter_client, as JupyterLab sends them."""

from __future__ import annotations


def run(kc, code: str) -> str:
    """Run a cell with history (a user's cell) and return what it printed; fail on an error."""
    out: list[str] = []

    def collect(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = kc.execute_interactive(code, timeout=120, output_hook=collect, store_history=True)
    assert reply["content"]["status"] == "ok", "".join(out)
    return "".join(out)
