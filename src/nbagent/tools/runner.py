"""The tool runner: one model response's tool calls parsed, validated, approved, executed and reported.

Read-only calls of one response run concurrently; as soon as one call may
change something, all run in order. Every failure becomes a tool result the
model can act on; the loop goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Callable

from .. import events as ev
from .approvals import DENIED_BY_THE_USER, Approvals
from ..errors import CommandKilled, ToolError
from ..workers import run_in_pool
from .base import Tool
from .context import ToolContext

class ToolRunner:
    def __init__(self, *, registry, base_context: ToolContext, approvals: Approvals,
                 emit: Callable[[ev.AnyEvent], None], session, output_limit: Callable[[str, str], str],
                 guard=None):
        self.registry = registry
        self.base_context = base_context
        self.approvals = approvals
        self.emit = emit
        self.session = session
        self.output_limit = output_limit
        self.finished_results: dict[str, dict[str, Any]] = {}
        self.guard = guard
        """nbagent.checkpoints.turn_guard.TurnGuard: told before and after each call that may change something."""

    async def run_calls(self, calls: list[dict[str, Any]], turn_id: str) -> list[dict[str, Any]]:
        self.finished_results = {}
        with self.base_context.processes.calls_in_flight():
            if all(self._read_only(c) for c in calls) and len(calls) > 1:
                results = await asyncio.gather(*(self._run_one(c, turn_id) for c in calls))
            else:
                results = [await self._run_one(c, turn_id) for c in calls]
        return list(results)

    def _read_only(self, call: dict[str, Any]) -> bool:
        tool = self.registry.get(call.get("name", ""))
        return bool(tool and tool.read_only)

    async def _run_one(self, call: dict[str, Any], turn_id: str) -> dict[str, Any]:
        name, call_id = call.get("name", ""), call["id"]
        started = time.perf_counter()
        status, arguments, ctx = "done", {}, None
        try:
            tool, arguments = self._prepare(call, turn_id)
            ctx = self.base_context.for_call(call_id)
            ctx.turn_id = turn_id
            decision = await self.approvals.decide(tool, ctx, arguments)
            if decision == "deny":
                status, output = "denied", getattr(decision, "why", DENIED_BY_THE_USER)
            else:
                output = await self._guarded(tool, ctx, arguments)
        except CommandKilled as exc:
            status, output = "killed", str(exc) or "killed by the user"
        except ToolError as exc:
            status, output = "failed", str(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool's bug must not end the turn: the model can often work around it
            status, output = "failed", f"{name} failed: {type(exc).__name__}: {exc}"
        sink = ctx.sink if ctx is not None else None
        return self._finish(call, arguments, status, output, started, turn_id,
                            sink.dicts() if sink is not None and status == "done" else None)

    def _prepare(self, call: dict[str, Any], turn_id: str) -> tuple[Tool, dict[str, Any]]:
        name = call.get("name", "")
        tool = self.registry.get(name)
        try:
            raw_args = parse_arguments(call.get("arguments") or "")
        except ValueError as exc:
            self.emit(ev.ToolCall(name=name, call_id=call["id"], arguments={}, turn_id=turn_id))
            raise ToolError(f"{name}: {exc}") from None
        self.emit(ev.ToolCall(name=name, call_id=call["id"], arguments=raw_args, turn_id=turn_id))
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(self.registry.names())}")
        return tool, tool.validate(raw_args)

    async def _guarded(self, tool: Tool, ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Run an approved call; the guard checkpoints before the turn's first change and journals it."""
        if self.guard is None:
            return await self._execute(tool, ctx, arguments)
        await self.guard.before_call(tool, ctx.call_id, arguments)
        status = "failed"
        try:
            output = await self._execute(tool, ctx, arguments)
            status = "done"
            return output
        finally:
            self.guard.after_call(tool, ctx.call_id, arguments, status)

    async def _execute(self, tool: Tool, ctx: ToolContext, arguments: dict[str, Any]) -> str:
        args = (ctx,) if tool.takes_context else ()
        if tool.is_async:
            result = await tool.fn(*args, **arguments)
        else:
            result = await run_in_pool(tool.fn, *args, **arguments)  # the agent's own loop
        return result if isinstance(result, str) else _to_text(result)

    def _finish(self, call, arguments, status, output, started, turn_id,
                images: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        name, call_id = call.get("name", ""), call["id"]
        output = self.output_limit(output, name)
        duration_ms = (time.perf_counter() - started) * 1000
        is_error = status != "done"
        self.emit(ev.ToolResult(name=name, call_id=call_id, output=output, is_error=is_error,
                                status=status, duration_ms=duration_ms, turn_id=turn_id))
        # The store keeps the model's own arguments (JSON data), not the validated objects.
        self.session.add_tool_call({"call_id": call_id, "name": name, "arguments": _raw(call),
                                    "status": status, "duration_ms": duration_ms, "is_error": is_error})
        message = {"role": "tool", "tool_call_id": call_id, "name": name, "content": output,
                   "is_error": is_error}
        if images:  # nbagent.images: sent to a model that can see, beside the captions in the output
            message["images"] = images
        self.finished_results[call_id] = message
        return message


def _raw(call: dict[str, Any]) -> Any:
    try:
        return json.loads(call.get("arguments") or "{}")
    except ValueError:
        return call.get("arguments") or ""


def _to_text(value: Any) -> str:
    if value is None:
        return "(no output)"
    try:
        return json.dumps(value, ensure_ascii=False, default=str, indent=1)
    except (TypeError, ValueError):
        return repr(value)


def parse_arguments(raw: str) -> dict[str, Any]:
    """The model's argument text as a dict; raises ValueError with a message the model can act on."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
                         "send the call again with a JSON object") from None
    if not isinstance(value, dict):
        raise ValueError("the arguments must be a JSON object")
    return value
