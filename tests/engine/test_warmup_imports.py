"""The background warm-up (%load_ext, the server extension) imports what the first turn needs and
nothing else: a first %agent sent at once waits for all of it. Each case runs in a fresh interpreter,
as a kernel starts."""

from __future__ import annotations

import pytest
import json
import os
import subprocess
import sys

pytestmark = pytest.mark.process

MODULES = ("httpx", "openai.resources.chat", "openai.resources.responses", "nbagent.engine.agent", "nbagent.tools")
PROBE = ("import json, sys\n"
         "{prelude}\n"
         "print(json.dumps({{m: m in sys.modules for m in {modules!r}}}))")
WARM = "from nbagent.engine import warmup\nwarmup.start()\nassert warmup.wait(120), 'the warm-up did not finish'"


def loaded_after(prelude: str, api: str | None = None) -> dict[str, bool]:
    env = {k: v for k, v in os.environ.items() if k != "NBAGENT_API"}
    if api is not None:
        env["NBAGENT_API"] = api
    done = subprocess.run([sys.executable, "-c", PROBE.format(prelude=prelude, modules=MODULES)], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_warm_up_imports_the_engine_and_the_chat_resource_the_first_turn_uses():
    loaded = loaded_after(WARM)
    assert loaded["nbagent.engine.agent"] and loaded["nbagent.tools"]
    assert loaded["openai.resources.chat"]
    assert not loaded["openai.resources.responses"], "the Responses API is not the default wire protocol"


def test_with_nbagent_api_responses_it_warms_the_responses_resource_instead():
    loaded = loaded_after(WARM, api="responses")
    assert loaded["openai.resources.responses"]
    assert not loaded["openai.resources.chat"]


def test_the_warm_up_imports_no_http_library_the_sdk_does_not_itself_import():
    bare = loaded_after("import openai")
    assert loaded_after(WARM)["httpx"] == bare["httpx"]
