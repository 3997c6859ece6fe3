"""Explain / Ask / Fix on a notebook's outputs in the real panel, by keyboard only, run with collaboration
on and off (two test modules): Explain on a matplotlib chart sends a request that carries the image,
Fix on an error ends in an approval card with the cell's diff, Ask attaches the output and focuses the
prompt box; axe-core finds nothing serious on the buttons or the panel."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import nbformat

from nbagent.testing import Call, Reply

from .live_flow import open_notebook

PANEL = ".jp-nbagent"
DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "jupyterlab-output-actions.png"


def chart_png() -> bytes:
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8))
    ax = fig.subplots()
    ax.plot([1, 2, 3, 4, 5], [2, 7, 3, 9, 4], marker="o")
    ax.set_title("weekly <b>sales</b>")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100)
    return out.getvalue()


def write_notebook(path: Path) -> list[str]:
    """A chart cell with its stored output and a cell whose stored output is a ZeroDivisionError."""
    chart = nbformat.v4.new_code_cell("plt.plot(sales)", outputs=[nbformat.v4.new_output(
        "display_data", data={"image/png": base64.b64encode(chart_png()).decode(),
                              "text/plain": "<Figure size 640x480 with 1 Axes>"})])
    error = nbformat.v4.new_code_cell("rate = total / count", outputs=[nbformat.v4.new_output(
        "error", ename="ZeroDivisionError", evalue="division by <i>zero</i>",
        traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by <i>zero</i>"])])
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [chart, error]
    nbformat.write(nb, path)
    return [c.id for c in nb.cells]


def run_output_actions(page, lab, shot, mode: str, model_server, axe) -> None:
    name = f"outputs-{mode}.ipynb"
    ids = write_notebook(lab.root / name)
    open_notebook(page, lab, name)
    buttons = page.locator(".jp-Notebook .jp-nbagent-output-action")
    buttons.first.wait_for()
    assert buttons.count() == 6  # Explain, Ask, Fix on each of the two outputs
    axe(".jp-Notebook .jp-nbagent-output-actions", f"{mode}: output actions")
    page.keyboard.press("Escape")  # command mode: the notebook has the focus, no editor

    # Explain on the chart: sent at once, the request carries the chart as an image.
    model_server.enqueue(Reply(text="Sales peak in week 4 and drop after."))
    before = len(model_server.model_requests())
    _tab_to_nth(page, "Explain output 1 with nbagent", 1)
    shot(f"output-actions-{mode}-01-focused")
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Sales peak in week 4").wait_for()
    body = model_server.model_requests()[before].body
    user = [m for m in body["messages"] if m["role"] == "user"][-1]
    parts = user["content"] if isinstance(user["content"], list) else [{"type": "text", "text": user["content"]}]
    text = "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")
    images = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert text.startswith("Explain this output") and f"active cell: {ids[0]}" in text
    assert "attached: output 1 of that cell" in text and "<Figure size 640x480" in text
    assert len(images) == 1 and base64.b64decode(images[0].split(",", 1)[1])[:4] == b"\x89PNG"
    bubble = page.locator(f"{PANEL} .jp-nbagent-user").last
    assert "output 1 attached" in bubble.inner_text() and "<open_in_jupyter>" not in bubble.inner_text()
    if mode == "no-rtc" and (not DOCS_SHOT.exists() or os.environ.get("NBAGENT_DOCS_SHOTS")):
        page.screenshot(path=str(DOCS_SHOT))  # docs/jupyterlab.md's picture (taken again on request)
    shot(f"output-actions-{mode}-02-explained")

    # Fix on the error: the edit waits for approval with its diff.
    model_server.enqueue(
        Reply(tool_calls=[Call("notebook_read", {"path": name}, id="call_read")]),
        Reply(tool_calls=[Call("notebook_edit", {"path": name, "cell_id": ids[1],
                                                 "source": "rate = total / count if count else 0.0"}, id="call_fix")]),
        Reply(text="Fixed: a zero count gives a zero rate."))
    page.locator(".jp-Notebook").first.focus()
    _tab_to_nth(page, "Fix output 1 with nbagent", 2)
    page.keyboard.press("Enter")
    card = page.locator(f"{PANEL} .jp-nbagent-approval")
    card.wait_for()
    diff = card.inner_text()
    assert "notebook_edit" in diff and "-rate = total / count" in diff and "+rate = total / count if count else 0.0" in diff
    fix_body = model_server.model_requests()[-2].body  # the request before notebook_read's result
    fix_text = str([m for m in fix_body["messages"] if m["role"] == "user"][-1]["content"])
    assert "Fix this error" in fix_text and "ZeroDivisionError" in fix_text and f"active cell: {ids[1]}" in fix_text
    axe(PANEL, f"{mode}: approval card after Fix")
    shot(f"output-actions-{mode}-03-fix-approval")
    page.keyboard.press("Tab")  # the card has the focus; Tab reaches Approve
    assert page.evaluate("() => document.activeElement?.textContent") == "Approve"
    page.keyboard.press("Enter")
    page.locator(f"{PANEL} .jp-nbagent-assistant", has_text="Fixed: a zero count").wait_for()
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content",
                                                        has_text="if count else 0.0").wait_for()

    # Ask: the output is attached above the prompt box, which has the focus; nothing is sent yet.
    sent = len(model_server.model_requests())
    page.locator(".jp-Notebook").first.focus()
    _tab_to_nth(page, "Ask output 1 with nbagent", 1)
    page.keyboard.press("Enter")
    chip = page.locator(f"{PANEL} .jp-nbagent-attachment-chip")
    chip.wait_for()
    assert "output 1 · image/png" in chip.inner_text() and chip.locator("img").count() == 1
    page.wait_for_function("() => document.activeElement?.getAttribute('aria-label') === 'Prompt for the agent'")
    assert len(model_server.model_requests()) == sent
    axe(PANEL, f"{mode}: the attachment chip")
    shot(f"output-actions-{mode}-04-ask")
    page.keyboard.press("Shift+Tab")  # the chip's ×: nothing is attached any more
    assert page.evaluate("() => document.activeElement?.getAttribute('aria-label')") == "Do not attach this output"
    page.keyboard.press("Enter")
    chip.wait_for(state="detached")


def _tab_to_nth(page, label: str, nth: int, limit: int = 160) -> None:
    """Press Tab until the ``nth`` element labelled ``label`` (in document order) has the focus."""
    for _ in range(limit):
        at = page.evaluate("""(label) => {
            const all = [...document.querySelectorAll(`[aria-label="${label}"]`)];
            return all.indexOf(document.activeElement) + 1;
        }""", label)
        if at == nth:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {label!r} number {nth}; the focus is on "
                         + page.evaluate("() => document.activeElement?.outerHTML.slice(0, 200)"))
