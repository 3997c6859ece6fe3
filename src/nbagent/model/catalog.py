"""The model names a user can pick from: the endpoint's /models list beside the configured names.

Many OpenAI-compatible servers answer GET /models (OpenAI, vLLM, Ollama, llama.cpp); some do not, or
refuse the key for it. A listing that fails is not an error of the agent: the configured names are
still offered, with the reason the endpoint gave none.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..render.redaction import public_url
from .factory import uses_local

LIST_TIMEOUT = 5.0
"""Seconds the endpoint gets to list its models: a picker waits for it."""
MAX_LISTED = 500
"""Names kept from the endpoint's list at most (OpenRouter lists hundreds)."""


@dataclass
class ModelChoices:
    models: list[str] = field(default_factory=list)
    """Configured names first (in the order given), then the endpoint's, sorted; no duplicates."""
    endpoint: str = ""
    """The endpoint asked, without credentials ("" for the offline model)."""
    problem: str | None = None
    """Why the endpoint's list is missing, if it is."""

    def to_dict(self) -> dict[str, Any]:
        return {"models": self.models, "endpoint": self.endpoint, "problem": self.problem}


async def model_choices(config, configured: Iterable[str | None]) -> ModelChoices:
    """The names to offer for ``config``'s endpoint: ``configured`` ones and what GET /models lists."""
    names = [n.strip() for n in configured if isinstance(n, str) and n.strip()]
    if uses_local(config):  # the offline model is one file, not a catalogue
        return ModelChoices(_unique(names), "", "the offline model serves one model only")
    listed, problem = await _endpoint_models(config)
    return ModelChoices(_unique([*names, *sorted(listed)]), public_url(config.base_url) or "the OpenAI API",
                        problem)


async def _endpoint_models(config) -> tuple[list[str], str | None]:
    from .openai_common import make_client, to_model_error

    client = make_client(config.with_changes(request_timeout=min(config.request_timeout, LIST_TIMEOUT)))
    try:
        names: list[str] = []
        async with asyncio.timeout(LIST_TIMEOUT):
            async for model in client.models.list():
                names.append(str(model.id))
                if len(names) >= MAX_LISTED:
                    break
        return names, None
    except TimeoutError:
        return [], f"the endpoint did not list its models within {LIST_TIMEOUT:g} s"
    except Exception as exc:  # every way a listing fails is a reason shown beside the configured names
        return [], str(to_model_error(exc, "", config.base_url))
    finally:
        await client.close()


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))
