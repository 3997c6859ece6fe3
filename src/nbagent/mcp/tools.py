"""An MCP server's tools as nbagent Tools: unique names, inlined schemas, trust, and results as text.

Everything here comes from an outside server and is treated as hostile: names
are reduced to what model APIs accept, descriptions are capped, schemas may be
recursive or invalid, and images, audio and binary resources are summarised
instead of being put on the wire.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from ..errors import CommandKilled, ToolError
from ..events import ApprovalPolicy
from ..render.escape import truncate
from ..tools.base import Tool, _clean_schema

Call = Callable[[str, str, dict[str, Any], Any], Awaitable[str]]
"""How a tool reaches its server: ``call(server, remote_tool, arguments, ctx)`` (MCPManager.call)."""

MAX_DESCRIPTION = 2000
NAME_LIMIT = 64
ANNOTATION_KEYS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` in the characters model APIs accept, at most 64 of them."""
    name = f"mcp__{_safe(server)}__{_safe(tool)}"
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:NAME_LIMIT - 9]}_{digest}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "_"


@dataclass
class MCPTool(Tool):
    """A tool of an MCP server; arguments are checked against the server's JSON schema."""

    server: str = ""
    remote_name: str = ""
    annotations: dict[str, Any] | None = None

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.validator is None:
            return arguments
        problems = sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.path))
        if problems:
            text = "; ".join(f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message}"
                             for e in problems[:5])
            raise ToolError(f"invalid arguments for {self.name}: {text}")
        return arguments


def make_tools(config: Any, call: Call, server: str, listed: list[Any], taken: set[str]) -> list[Tool]:
    """nbagent Tools for ``listed`` (the server's mcp Tool objects, ``config`` its MCPServerConfig), each
    calling ``call``; names stay unique within ``taken``."""
    tools: list[Tool] = []
    for remote in listed:
        name = _unique(tool_name(server, remote.name), taken)
        taken.add(name)
        trust = config.trust_for(remote.name)
        schema = _input_schema(getattr(remote, "input_schema", None))
        description = (remote.description or remote.name).strip()
        description = truncate(description, MAX_DESCRIPTION + 1)  # MAX_DESCRIPTION kept, then "…"
        tools.append(MCPTool(
            name=name, description=f"{description}\n(MCP server {server!r}, tool {remote.name!r})",
            parameters=schema, fn=_caller(call, server, remote.name), toolset=f"mcp:{server}",
            # Side effects unknown: ask even in auto mode, unless the server is trusted ("read": never
            # ask; "always": ask only in ask mode). A server is another program's code: never read-only
            # (read-only mode denies it whatever its trust; Tool.runs).
            approval=TRUST_POLICY.get(trust, "ask"), runs="outside",
            takes_context=True, is_async=True, validator=_validator(schema),
            server=server, remote_name=remote.name, annotations=_annotations(remote),
        ))
    return tools


def _unique(name: str, taken: set[str]) -> str:
    n = 2
    candidate = name
    while candidate in taken:
        suffix = f"_{n}"
        candidate = name[:NAME_LIMIT - len(suffix)] + suffix
        n += 1
    return candidate


def _input_schema(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    cleaned = _clean_schema(schema)
    if cleaned.get("type") != "object":
        return {"type": "object", "properties": {}}
    cleaned.setdefault("properties", {})
    return cleaned


TRUST_POLICY: dict[str, ApprovalPolicy] = {"read": "never", "ask": "always_ask"}
"""A server's trust level (nbagent.mcp.config.TRUST_LEVELS) -> its tools' policy ("always": "ask")."""


def _validator(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for the schema, or None when the server's schema is itself invalid."""
    from jsonschema import Draft202012Validator, SchemaError, validators

    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None  # the server checks its own arguments; an invalid schema must not block every call
    return cls(schema)


def _annotations(remote: Any) -> dict[str, Any] | None:
    raw = getattr(remote, "annotations", None)
    if raw is None:
        return None
    data = raw.model_dump(by_alias=True, exclude_none=True) if hasattr(raw, "model_dump") else dict(raw)
    kept = {k: data[k] for k in ANNOTATION_KEYS if k in data}
    return kept or None


def _caller(call: Call, server: str, remote: str):
    async def call_remote(ctx, **arguments: Any) -> str:
        return await call(server, remote, arguments, ctx)

    return call_remote


async def run_cancellable(in_flight: dict[asyncio.Task, asyncio.Future], coro, server: str, on_cancel) -> Any:
    """Await ``coro`` in its own task so Stop can cut it without cutting the turn (``in_flight``: the
    calls Stop may cut, each with the future that cuts it)."""
    task = asyncio.ensure_future(coro)
    stop = asyncio.get_running_loop().create_future()
    in_flight[task] = stop
    try:
        done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # Abort: the turn goes; the server is told and checked behind it
        task.cancel()
        asyncio.ensure_future(on_cancel())
        raise
    finally:
        in_flight.pop(task, None)
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    killed = await on_cancel()
    note = "; the server did not give up the call and was killed (it restarts on the next call)" if killed else ""
    raise CommandKilled(f"MCP call to {server!r} stopped by the user{note}")


def result_text(result: Any) -> str:
    """A CallToolResult as text: text blocks as they are, binary blocks summarised."""
    parts = [_block_text(block) for block in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1, default=str))
    text = "\n".join(p for p in parts if p) or "(no output)"
    if getattr(result, "is_error", False):
        raise ToolError(text)
    return text


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, about {len(block.data) * 3 // 4} bytes: not shown to the model]"
    if kind == "resource":
        res = block.resource
        if getattr(res, "text", None) is not None:
            return f"[resource {res.uri}]\n{res.text}"
        size = len(getattr(res, "blob", "") or "") * 3 // 4
        return f"[resource {res.uri} ({res.mime_type or 'binary'}), about {size} bytes: not shown]"
    if kind == "resource_link":
        return f"[resource link {block.uri}" + (f" ({block.name})" if getattr(block, "name", None) else "") + "]"
    return f"[{kind or 'unknown'} content: not shown]"
