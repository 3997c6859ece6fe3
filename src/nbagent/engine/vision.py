"""Whether this session's model is sent images, and the retry without them when an endpoint refuses.

In order: a refusal earlier in this session (no); ``vision_models`` for the model's name; ``vision``;
the offline model (no); what a local server says of the model (Ollama's capabilities, llama.cpp's
modalities: nbagent.model.served_context); otherwise yes. No offline catalogue says which models take
images (genai-prices, the one nbagent reads for prices, does not), so a hosted model is tried, and an
endpoint that refuses the request with images gets the same request without them, once, and no images
for the rest of the session; an Error event of kind ``images_refused`` says so in every front end.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ModelError
from ..images.window import ImagePlaces, carried_tokens, windowed

REFUSED_KIND = "images_refused"
_ABOUT_IMAGES = re.compile(r"image|vision|multimodal|multi-modal|mmproj|content part|content type|modalit", re.I)


class Vision:
    """One per session (the loop's): what it decides is read again at each request, since the model
    and the configuration may change between them."""

    def __init__(self) -> None:
        self.refused: str | None = None
        """The endpoint's refusal, once it refused a request with images (for the rest of the session)."""
        self.places = ImagePlaces()
        self._windowed: tuple[int, list[int]] = (-1, [])
        """The last request's length and where its images can be, for ``carried``."""

    def sees(self, config, model: Any, served: Any = None) -> bool:
        if self.refused is not None:
            return False
        named = (getattr(config, "vision_models", None) or {}).get(getattr(model, "name", "") or "")
        if named is not None:
            return named
        if getattr(config, "vision", None) is not None:
            return config.vision
        if getattr(model, "offline", False) or getattr(model, "provider", "") == "local":
            return False
        said = getattr(served, "vision", None)
        return said if isinstance(said, bool) else True

    def window(self, config, model: Any, messages: list[dict[str, Any]], served: Any = None) -> list[dict[str, Any]]:
        """``messages`` as this request sends them: the newest ``max_images`` images, or none."""
        limit = getattr(config, "max_images", 4) if self.sees(config, model, served) else 0
        places = self.places.of(messages)
        self._windowed = (len(messages), list(places))
        return windowed(messages, limit, places)

    def carried(self, messages: list[dict[str, Any]]) -> int:
        """The estimated tokens of the images a request carries: only where the last ``window`` found
        images, when ``messages`` is that request (a windowed copy keeps every index in its place)."""
        length, places = self._windowed
        return carried_tokens(messages, places if length == len(messages) else None)

    @staticmethod
    def is_refusal(error: ModelError) -> bool:
        """A failure that may be the images' fault: any 4xx refusal of the request, or a server error
        that names images (llama.cpp answers 500 "image input is not supported" without a projector)."""
        if error.kind in ("bad_request", "not_found"):
            return True
        return error.kind == "server" and bool(_ABOUT_IMAGES.search(str(error)))

    def refuse(self, error: ModelError) -> str:
        """Remember the refusal; the note every front end shows."""
        self.refused = str(error)
        return (f"the endpoint refused a request with images ({error}); it was sent again without them, and "
                "images go as their captions for the rest of this session (set vision: true or false to choose)")
