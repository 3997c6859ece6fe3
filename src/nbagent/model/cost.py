"""The price of a model call, from genai-prices' offline snapshot; None when the model is not known.

Never a guess: a local server, an unknown endpoint or an unknown model name
gives None (shown as "cost unknown"), not the price of some similar model.
"""

from __future__ import annotations

from urllib.parse import urlparse

from genai_prices import Usage, calc_price

# Our adapters' names for the official OpenAI endpoint (used when no base_url is set).
_PROVIDER_ALIASES = {"openai-chat": "openai", "openai-responses": "openai"}
_NOT_PRICED = {"", "scripted", "local"}


def cost_of(model: str | None, provider_or_base_url: str | None, input_tokens: int,
            output_tokens: int, *, cached_tokens: int = 0) -> float | None:
    """US dollars for one call, or None when genai-prices does not know this model at this provider.

    ``provider_or_base_url`` is a base URL (http://..., matched against known endpoints) or a
    provider id ("openai", "anthropic", ...); None lets genai-prices pick the provider from the model.
    ``cached_tokens`` (part of ``input_tokens``) are priced as cache reads, at the model's cache-read
    price (input price where the model has none).
    """
    if not model:
        return None
    where = (provider_or_base_url or "").strip()
    where = _PROVIDER_ALIASES.get(where, where)
    if where in _NOT_PRICED - {""} or (model, where) in _UNPRICED:
        return None
    try:
        price = _calc(model, where, int(input_tokens), int(output_tokens), min(int(cached_tokens), int(input_tokens)))
    except LookupError:
        _UNPRICED.add((model, where))
        return None
    return float(price)


_UNPRICED: set[tuple[str, str]] = set()
"""Models genai-prices does not know at a place. Finding that out searches its whole snapshot (about
0.5 ms), which a batch of many agents on a local server paid at every step; the snapshot does not
change while the process runs."""


def _calc(model: str, where: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0):
    # genai-prices counts cache reads inside input_tokens and prices the rest as uncached input.
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached_tokens or None)
    if not where:
        return calc_price(usage, model).total_price
    if urlparse(where).scheme in ("http", "https"):
        return calc_price(usage, model, provider_api_url=where).total_price
    return calc_price(usage, model, provider_id=where).total_price
