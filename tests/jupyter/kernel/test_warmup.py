"""The warm-up %load_ext starts in the background: a fresh kernel's first %agent, sent at once, works
(no import race with the warm-up thread) and reaches the model through the real openai client."""

from __future__ import annotations

import os

import pytest
from jupyter_client.manager import start_new_kernel

from nbagent.testing import Reply, ScriptedServer

pytestmark = [pytest.mark.kernel, pytest.mark.integration]


def test_the_first_agent_right_after_load_ext_waits_for_the_warm_up(tmp_path):
    with ScriptedServer(responder=lambda body: Reply(text="warm hello")) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test",
               "NBAGENT_MODEL": "scripted-model", "NBAGENT_LOCAL": "off", "NBAGENT_MEMORY": "0"}
        km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
        try:
            loaded = kc.execute_interactive("%load_ext nbagent\nimport nbagent.engine.warmup as w\n"
                                            "assert w._started is not None", timeout=60)
            assert loaded["content"]["status"] == "ok"
            errors = []
            ran = kc.execute_interactive(  # no pause: the warm-up is most likely still importing
                "%agent --wait hello", timeout=90,
                output_hook=lambda m: errors.append(m["content"]) if m["msg_type"] == "error" else None)
            assert ran["content"]["status"] == "ok" and not errors, errors
            assert server.model_requests(), "the first %agent reached the model"
            settled = kc.execute_interactive("assert w.wait(0)", timeout=30)
            assert settled["content"]["status"] == "ok"
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
