"""What the scripted server says about the context it serves, as Ollama or llama.cpp's server would.

Ollama: ``POST /api/show`` gives a model's Modelfile parameters (``num_ctx`` when one is set) and
its trained context; ``GET /api/ps`` lists the loaded models with the context each was loaded with;
``POST /api/generate`` with no prompt loads a model. llama.cpp's server: ``GET /props`` gives
``default_generation_settings.n_ctx``. Shapes follow those servers' answers, reduced to the fields
a client reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass
class ServedContext:
    kind: Literal["ollama", "llama.cpp"]
    context: int
    """Tokens the server serves (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; llama.cpp: --ctx-size)."""
    model: str = "scripted-model"
    num_ctx: int | None = None
    """Ollama: a Modelfile's ``PARAMETER num_ctx`` (shown by /api/show), if the model has one."""
    trained: int = 131_072
    loaded: bool = False
    """Ollama lists a model in /api/ps only once it is loaded (a request or /api/generate loads it)."""
    vision: bool | None = None
    """Whether the model takes images: Ollama's /api/show ``capabilities`` then lists "vision",
    llama.cpp's /props ``modalities.vision`` is true (None: the server does not say, as older ones)."""

    def answer(self, method: str, path: str, body: Any) -> tuple[int, dict[str, Any]] | None:
        """(status, JSON) for a context endpoint of this kind of server; None for any other path."""
        if self.kind == "llama.cpp":
            if (method, path) == ("GET", "/props"):
                props: dict[str, Any] = {"default_generation_settings": {"n_ctx": self.context}, "total_slots": 1,
                                         "model_path": f"/models/{self.model}.gguf"}
                if self.vision is not None:
                    props["modalities"] = {"vision": self.vision, "audio": False}
                return 200, props
            return None
        return self._ollama(method, path, body if isinstance(body, dict) else {})

    def _ollama(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if (method, path) == ("POST", "/api/show"):
            if body.get("model") != self.model:
                return 404, {"error": f"model '{body.get('model')}' not found"}
            parameters = f"num_ctx                        {self.num_ctx}" if self.num_ctx else ""
            show: dict[str, Any] = {"parameters": parameters, "model_info": {"llama.context_length": self.trained},
                                    "details": {"format": "gguf", "family": "llama"}}
            if self.vision is not None:
                show["capabilities"] = ["completion", "tools", *(["vision"] if self.vision else [])]
            return 200, show
        if (method, path) == ("GET", "/api/ps"):
            models = [{"name": self.model, "model": self.model, "context_length": self.num_ctx or self.context}]
            return 200, {"models": models if self.loaded else []}
        if (method, path) == ("POST", "/api/generate") and not body.get("prompt"):
            self.loaded = True
            return 200, {"model": self.model, "response": "", "done": True, "done_reason": "load"}
        return None
