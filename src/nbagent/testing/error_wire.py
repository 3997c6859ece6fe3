"""A scripted Fail as an OpenAI-style HTTP error.

Status, headers and a {"error": {"message", "type", "param", "code"}} body, with OpenAI's own
wording by default."""

from __future__ import annotations

import math
from typing import Any

from nbagent.testing.replies import Fail, context_overflow
from nbagent.testing.wire_common import estimate_tokens

# status -> (message template, error type, code); {model} and {key} are filled from the request.
_DEFAULTS: dict[int, tuple[str, str, str | None]] = {
    401: ("Incorrect API key provided: {key}. You can find your API key at "
          "https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to use this model.", "invalid_request_error", "permission_denied"),
    404: ("The model `{model}` does not exist or you do not have access to it.",
          "invalid_request_error", "model_not_found"),
    429: ("Rate limit reached for {model} in organization org-scripted on requests per min (RPM): "
          "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request. Sorry about that!",
          "server_error", None),
    502: ("Bad gateway.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}


def error_response(
    fail: Fail, body: dict[str, Any] | None, headers: dict[str, str]
) -> tuple[dict[str, str], dict[str, Any]]:
    """(extra headers, JSON body) of the error answer to a request."""
    body = body or {}
    if fail.message is not None:
        message, code, param = fail.message, fail.code, None
        kind = _DEFAULTS.get(fail.status, ("", "invalid_request_error", None))[1]
    elif fail.status == 400:
        prompt = [body.get("messages"), body.get("input"), body.get("tools")]
        overflow = context_overflow(8192, max(8193, estimate_tokens(prompt)))
        message, kind, code, param = overflow.message, "invalid_request_error", overflow.code, "messages"
    else:
        template, kind, code = _DEFAULTS.get(fail.status, (f"HTTP {fail.status}", "error", None))
        message = template.format(model=body.get("model", "?"), key=_masked_key(headers))
        param = None
    extra = {"x-request-id": "req_scripted"}
    if fail.retry_after is not None:
        extra["retry-after"] = str(math.ceil(fail.retry_after))
        extra["retry-after-ms"] = str(int(fail.retry_after * 1000))
    error = {"message": message, "type": kind, "param": param, "code": code}
    return extra, {"error": error}


def _masked_key(headers: dict[str, str]) -> str:
    key = headers.get("authorization", "").removeprefix("Bearer ").strip()
    if len(key) <= 8:
        return "***"
    return f"{key[:3]}***{key[-4:]}"
