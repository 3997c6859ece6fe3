"""Inline completions in real JupyterLab (headless Chromium): typing in a cell shows ghost text from the
model through JupyterLab's own inline completer, and Tab accepts it. The DataFrame's column exists only in
the kernel (read from a CSV file, named in no cell), so the completion can only know it from the kernel's
names the server sends. The screenshot goes to docs/images/inline-completion.png (docs/jupyterlab.md)."""

from __future__ import annotations

import re
import time

import nbformat
import pytest

from nbagent.testing import Reply, ScriptedServer, Slow
from tests.paths import CHECKOUT

pytestmark = [pytest.mark.browser, pytest.mark.integration]

DOCS_IMAGE = CHECKOUT / "docs" / "images" / "inline-completion.png"
COLUMN = re.compile(r"'(\w+)' \w+")


def complete_from_the_prompt(body: dict) -> Reply:
    """A small model: finishes the word before <CURSOR> with a column the prompt lists, closing the
    subscript. It knows no column of its own: only what the prompt says the kernel holds."""
    prompt = body["messages"][-1]["content"]
    before = prompt.split("<CURSOR>")[0]
    typed = re.search(r"(\w*)$", before)
    stem = typed.group(1) if typed else ""
    for column in COLUMN.findall(prompt):
        if stem and column.startswith(stem) and column != stem:
            return Reply(column[len(stem):] + '"]')
    return Reply("")


@pytest.fixture(scope="module")
def model_server():
    with ScriptedServer(chunk_size=3, responder=complete_from_the_prompt) as server:
        yield server


@pytest.fixture(scope="module")
def lab_env(model_server):
    return {"OPENAI_BASE_URL": model_server.url, "OPENAI_API_KEY": "sk-test", "NBAGENT_MODEL": "scripted-model",
            "NBAGENT_LOCAL": "off", "NBAGENT_COMPLETIONS": "auto"}


def open_notebook(page, lab, name: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=60_000)
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=60_000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    if accept.count():
        accept.first.click()
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=60_000)


def test_typing_shows_a_kernel_column_as_ghost_text_and_tab_accepts_it(page, lab, model_server, shot):
    (lab.root / "sales.csv").write_text("region,revenue_eur_2024,units\nnorth,1.5,3\nsouth,2.0,4\n")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Sales"),
        nbformat.v4.new_code_cell("import pandas as pd\nsales = pd.read_csv('sales.csv')"),
        nbformat.v4.new_code_cell("")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, lab.root / "sales.ipynb")
    open_notebook(page, lab, "sales.ipynb")
    cells = page.locator(".jp-NotebookPanel .jp-Cell .cm-content")
    cells.nth(1).click()
    page.keyboard.press("Shift+Enter")  # runs the read; the last cell is now the active one
    page.locator(".jp-StatusBar-Widget", has_text="Idle").first.wait_for(timeout=30_000)
    page.locator(".jp-Cell .jp-InputPrompt", has_text="[1]").first.wait_for(timeout=30_000)

    cells.nth(2).click()
    page.keyboard.type('sales["rev', delay=60)
    ghost = page.locator(".jp-GhostText")
    ghost.first.wait_for(timeout=15_000)
    page.wait_for_function(
        "() => (document.querySelector('.jp-GhostText')?.textContent || '').includes('enue_eur_2024')",
        timeout=15_000)
    assert "enue_eur_2024" in ghost.first.inner_text()
    shot("inline-completion")
    DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
    box = page.locator(".jp-NotebookPanel").first.bounding_box()
    assert box is not None
    page.screenshot(path=str(DOCS_IMAGE), clip={"x": box["x"], "y": box["y"], "width": min(box["width"], 760),
                                                 "height": 220})

    page.keyboard.press("Tab")  # JupyterLab's key for accepting an inline completion
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-NotebookPanel .jp-Cell .cm-content')[2]?.textContent"
        " === 'sales[\"revenue_eur_2024\"]'", timeout=10_000)
    assert page.locator(".jp-GhostText").count() == 0

    completions = [r for r in model_server.model_requests("chat") if "<CURSOR>" in str(r.body)]
    assert completions, "no completion reached the model"
    prompt = (completions[-1].body or {})["messages"][-1]["content"]
    assert "sales: pandas.DataFrame (2x3), columns 'region'" in prompt and "'revenue_eur_2024'" in prompt
    assert "read_csv('sales.csv')" in prompt  # the earlier cell, as context
    # Debounced and cancelled: far fewer requests than the 10 keystrokes typed.
    assert len(completions) <= 3, [r.body["messages"][-1]["content"][-40:] for r in completions if r.body]
    page.keyboard.press("Shift+Enter")
    page.locator(".jp-OutputArea-output", has_text="1.5").first.wait_for(timeout=20_000)


def test_the_next_keystroke_aborts_the_request_in_flight_and_the_model_request_with_it(page, lab, model_server):
    """A slow answer is streaming into the ghost text; one more keystroke aborts its HTTP request in the
    page, and the server hangs up on the model (the scripted server sees its write fail)."""
    aborted: list[str] = []
    page.on("requestfailed", lambda r: aborted.append(r.failure or "") if "nbagent/api/complete" in r.url else None)
    model_server.responder = lambda body: Slow(0.1, Reply("_total" * 20))  # 30 chunks: three seconds
    before = len(model_server.model_requests())
    page.locator(".jp-NotebookPanel .jp-Cell .cm-content").last.click()
    page.keyboard.type("units", delay=30)
    page.wait_for_function(
        "() => (document.querySelector('.jp-GhostText')?.textContent || '').includes('_total')", timeout=15_000)
    streaming = model_server.model_requests()[before:][-1:]  # the one whose answer the ghost text shows
    assert streaming and streaming[0].hung_up is None
    page.keyboard.type("X")  # the next keystroke, while the answer still streams
    deadline = time.monotonic() + 5
    while streaming[0].hung_up is None and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert aborted and "ABORTED" in aborted[0].upper(), aborted
    assert streaming[0].hung_up is not None, "the model's request outlived the editor's"
    model_server.responder = complete_from_the_prompt
