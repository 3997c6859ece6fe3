"""The vision tasks through the eval harness: a model that answers only from an image it was sent passes
with images on and fails with ``--config blind:vision=false`` (the scripted server, the real client)."""

from __future__ import annotations

import re

import pytest

import nbagent
from nbagent.cli.eval import parse_config
from nbagent.testing import Call, Reply, ScriptedServer

pytestmark = pytest.mark.integration


def looking_model(body: dict):
    """Reads the chart the prompt names; answers the month only when the request carries an image."""
    messages = body["messages"]
    if messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], str) and len(messages) <= 2:
        chart = re.search(r"\w+\.png", messages[-1]["content"])
        return Reply(tool_calls=[Call("read_file", {"path": chart.group(0) if chart else "chart.png"})])
    sees = any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
               for m in messages)
    return Reply(text="August has the highest sales." if sees else "I only have the caption: I cannot tell.")


def test_the_blind_configuration_parses():
    assert parse_config("blind:vision=false") == ("blind", {"vision": "false"})


def test_vision_makes_the_difference_on_a_chart_task(tmp_path):
    with ScriptedServer(responder=looking_model) as server:
        df = nbagent.eval(models=["looker"], tasks="vision-bar-peak-month", base_url=server.url, api_key="sk-test",
                          max_retries=0, configs={"seeing": {}, "blind": parse_config("blind:vision=false")[1]},
                          out=tmp_path / "run", progress=False)
    passed = dict(zip(df["config"], df["passed"]))
    assert passed == {"seeing": True, "blind": False}, df[["config", "passed", "check_reason"]].to_dict("records")
