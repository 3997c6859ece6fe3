"""Choosing the model: a configured endpoint, the offline model, or an error that says how to configure one."""

from __future__ import annotations

import pytest

from nbagent import Agent
from nbagent.config import AgentConfig
from nbagent.errors import ConfigError
from nbagent.model.chat import ChatModel
from nbagent.model.factory import make_model
from nbagent.model.responses import ResponsesModel
from tests.paths import CHECKOUT


def test_no_endpoint_and_no_offline_model_says_how_to_configure_one(tmp_path):
    with pytest.raises(ConfigError) as info:
        Agent(workspace=tmp_path, local="off")
    message = str(info.value)
    for needle in ("OPENAI_API_KEY", "Ollama", "vLLM", "llama.cpp", "OPENAI_BASE_URL", "jupyter-nbagent[local]"):
        assert needle in message


def test_environment_variables_choose_endpoint_model_and_api(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NBAGENT_MODEL", "qwen2.5-coder")
    monkeypatch.setenv("NBAGENT_API", "responses")
    model = make_model(AgentConfig.load(workspace=tmp_path))
    assert isinstance(model, ResponsesModel) and model.name == "qwen2.5-coder"
    assert str(model.client.base_url).startswith("http://127.0.0.1:9/v1")


def test_arguments_override_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("NBAGENT_MODEL", "from-env")
    model = make_model(AgentConfig.load(workspace=tmp_path, model="from-arg", base_url="http://127.0.0.1:9/v1",
                                        api="chat"))
    assert isinstance(model, ChatModel) and model.name == "from-arg"


def test_a_base_url_without_a_model_name_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no model name"):
        make_model(AgentConfig.load(workspace=tmp_path, base_url="http://127.0.0.1:9/v1", local="off"))


def test_a_named_model_without_an_endpoint_is_an_error_naming_it_not_the_offline_model(tmp_path):
    with pytest.raises(ConfigError) as info:
        make_model(AgentConfig.load(workspace=tmp_path, model="gpt-4.1-mini", local="auto"))
    message = str(info.value)
    assert "'gpt-4.1-mini' needs an endpoint" in message
    assert "API key (OPENAI_API_KEY" in message and "base URL (OPENAI_BASE_URL" in message


def test_the_python_api_is_told_model_equals(tmp_path):
    with pytest.raises(ConfigError) as info:
        make_model(AgentConfig.load(workspace=tmp_path, base_url="http://127.0.0.1:9/v1", local="off"))
    assert str(info.value) == "no model name for http://127.0.0.1:9/v1: set NBAGENT_MODEL or pass model=..."


def test_bad_options_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="api must be one of"):
        AgentConfig.load(workspace=tmp_path, api="soap")
    with pytest.raises(ConfigError, match="approval must be one of"):
        AgentConfig.load(workspace=tmp_path, approval="sometimes")
    with pytest.raises(ConfigError, match="unknown configuration option"):
        AgentConfig.load(workspace=tmp_path, modle="x")
    with pytest.raises(ConfigError, match="not a directory"):
        AgentConfig.load(workspace=tmp_path / "missing")


def test_every_option_is_documented():
    from pathlib import Path
    from dataclasses import fields

    doc = (CHECKOUT / "docs" / "configuration.md").read_text()
    missing = [f.name for f in fields(AgentConfig) if f"`{f.name}`" not in doc]
    assert not missing, f"docs/configuration.md lacks {missing}; run scripts/gen_config_docs.py"


def test_an_unknown_model_is_looked_up_in_the_price_list_once(monkeypatch):
    from nbagent.model import cost

    calls = []
    real = cost._calc

    def counting(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(cost, "_calc", counting)
    monkeypatch.setattr(cost, "_UNPRICED", set())
    assert cost.cost_of("no-such-model-xyz", "http://localhost:9/v1", 10, 5) is None
    assert cost.cost_of("no-such-model-xyz", "http://localhost:9/v1", 10, 5) is None
    assert len(calls) == 1
    assert cost.cost_of("gpt-4o", "openai", 1000, 1000) > 0  # known models are still priced
