"""One turn: build the request, stream the model, run its tool calls, repeat.

The turn ends when the model answers without tool calls (done), the user
aborts (aborted), a model call fails for good (error), or ``max_steps`` model
calls have been made (max_steps). Every completed step is appended to the
session (durable) before the next model call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from .. import events as ev
from ..errors import ModelError
from ..model.base import (Model, ModelRequest, ReasoningChunk, ResponseDone, TextChunk, ToolCallArgs, ToolCallBegin, UsageInfo)
from ..model.cost import cost_of
from .profiles import FULL, Profile
from .prompt import system_prompt
from .compaction import cut_index, message_chars, prune_at
from ..tools.runner import ToolRunner


@dataclass
class TurnState:
    """What one turn has produced so far (used to keep partial work on abort or error)."""

    turn_id: str
    text: list[str] = field(default_factory=list)
    steps: int = 0
    partial: dict[str, Any] | None = None
    """The assistant message being streamed, kept if the turn is cut mid-stream."""
    streaming_calls: dict[str, str] = field(default_factory=dict)
    """Calls (id: name) whose arguments are still streaming: cut there, they end as interrupted."""


class Loop:
    """Runs turns for one session. Owned by an Agent; runs on the agent's event loop."""

    before_request: Callable[[str], Awaitable[None]] | None = None
    """Awaited with the turn id inside the turn, before its first request: the runtime asks the user
    about stored commands there (nbagent.engine.stored_commands), and Abort cancels the wait."""

    def __init__(self, *, model: Model, session, registry, config, emit: Callable[[ev.Event], None],
                 runner: ToolRunner, prompt_parts: Callable[[], tuple[str, str, str]],
                 before_steps: Callable[[str], None] = lambda turn_id: None, guard=None,
                 before_prompt: Callable[[str], list[dict[str, Any]]] | None = None, profile: Profile = FULL):
        self.model = model
        self.profile = profile
        """nbagent.engine.profiles: the answer cap and how many calls of a turn are offered tools."""
        self.session = session
        self.registry = registry
        self.config = config
        self.emit = emit
        self.runner = runner
        self.prompt_parts = prompt_parts
        self.before_steps = before_steps
        """Called with the turn id after turn_start, before the first request (memory injection)."""
        self.guard = guard
        """nbagent.checkpoints.turn_guard.TurnGuard: checkpoints and the recovery journal (None: neither)."""
        self.before_prompt = before_prompt
        """Called with the turn id once the turn has started, before its prompt is added: the attached
        context's notes go in there (between turns, never mid-turn). Returns the messages it appended."""
        self._wire_chars = sum(session.wire_sizes())
        self._last_input_tokens: int | None = None
        self._chars_since_usage = 0
        self._pruned_to: int | None = None

    async def run_turn(self, prompt: str, turn_id: str) -> ev.TurnEnd:
        state = TurnState(turn_id)
        self.session.begin_turn(prompt)
        self.emit(ev.TurnStart(prompt=prompt, session_id=self.session.id, title=self.session.title,
                               turn_id=turn_id))
        if self.guard is not None:
            self.guard.begin_turn(self.session.turns, turn_id)
        if self.before_prompt is not None:
            self._count(self.before_prompt(turn_id))
        self.session.defer_records = True  # records ride along with each step's commit
        self._append([{"role": "user", "content": prompt}])
        try:
            self.before_steps(turn_id)
            reason = await self._steps(state)
        except asyncio.CancelledError:
            self._keep_partial(state)
            return self._end(state, "aborted")
        except ModelError as exc:
            self._keep_partial(state)
            self.emit(ev.Error(message=str(exc), kind=exc.kind, status_code=exc.status_code, turn_id=turn_id))
            return self._end(state, "error")
        return self._end(state, reason)

    async def _steps(self, state: TurnState) -> str:
        if self.before_request is not None:
            await self.before_request(state.turn_id)
        while state.steps < self.config.max_steps:
            state.steps += 1
            message = await self._call_model(state)
            calls = message.get("tool_calls") or []
            if not calls:
                self._append([message])
                return "done"
            state.partial = message
            results = await self.runner.run_calls(calls, state.turn_id)
            state.partial = None
            self._append([message, *results])
        return "max_steps"

    async def _call_model(self, state: TurnState) -> dict[str, Any]:
        request = self._request(state.turn_id, state.steps)
        state.partial = {"role": "assistant", "content": ""}
        streamed: list[str] = []
        names: dict[int, tuple[str, str]] = {}
        done: ResponseDone | None = None
        emit, tid = self.emit, state.turn_id
        async for chunk in self.model.stream(request):
            if isinstance(chunk, TextChunk):
                streamed.append(chunk.text)
                state.partial["content"] += chunk.text
                emit(ev.TextDelta(text=chunk.text, turn_id=tid))
            elif isinstance(chunk, ReasoningChunk):
                emit(ev.ReasoningDelta(text=chunk.text, turn_id=tid))
            elif isinstance(chunk, ToolCallBegin):
                names[chunk.index] = (chunk.name, chunk.call_id)
                state.streaming_calls[chunk.call_id] = chunk.name
                emit(ev.ToolInputStart(name=chunk.name, call_id=chunk.call_id, turn_id=tid))
            elif isinstance(chunk, ToolCallArgs):
                name, call_id = names.get(chunk.index, ("", ""))
                emit(ev.ToolInputDelta(name=name, call_id=call_id, text=chunk.text, turn_id=tid))
            elif isinstance(chunk, UsageInfo):
                self._usage(chunk, tid)
            elif isinstance(chunk, ResponseDone):
                done = chunk
        if done is None:
            raise ModelError("the model stream ended without a final response", kind="stream_broken")
        state.text.append("".join(streamed))
        state.streaming_calls.clear()
        return done.message

    def _request(self, turn_id: str, step: int = 1) -> ModelRequest:
        static, todos, memory = self.prompt_parts()
        offer_tools = self.profile.tool_steps is None or step <= self.profile.tool_steps
        if self._estimate_tokens() > self.config.compact_threshold:
            messages = self._pruned(turn_id)
        else:
            messages = list(self.session.wire_messages())
        return ModelRequest(
            system=system_prompt(static, todos, memory), messages=messages,
            tools=self.registry.specs() if offer_tools else [], max_tokens=self.profile.max_tokens,
            temperature=self.config.temperature, reasoning_effort=self.config.reasoning_effort,
        )

    def _pruned(self, turn_id: str) -> list[dict]:
        # compaction.prune, sized without reading what a resume left in the store: before the cut,
        # messages are cut down to what their heads hold, so only the kept ones are read whole.
        sizes = self.session.wire_sizes()
        cut = cut_index(sizes, self.config.compact_threshold)
        wire = prune_at(self.session.wire_messages(loaded_from=cut), cut)
        before = len(sizes)
        if len(wire) < before and len(wire) != self._pruned_to:
            self._pruned_to = len(wire)
            self.emit(ev.Compacted(
                before=before, after=len(wire), turn_id=turn_id,
                message=f"context compacted: {before} messages pruned to {len(wire)} on the wire",
            ))
        return wire

    def _estimate_tokens(self) -> int:
        # Once the API has reported usage, trust it and add only what came since.
        if self._last_input_tokens is not None:
            return self._last_input_tokens + self._chars_since_usage // 4
        return self._wire_chars // 4

    def _append(self, messages: list[dict[str, Any]]) -> None:
        self.session.append(messages)
        if self.guard is not None:
            self.guard.step_durable(messages)
        self._count(messages)

    def _count(self, messages: list[dict[str, Any]]) -> None:
        added = sum(message_chars(m) for m in messages)
        self._wire_chars += added
        self._chars_since_usage += added

    def _usage(self, usage: UsageInfo, turn_id: str) -> None:
        self._last_input_tokens = usage.input_tokens + usage.output_tokens
        self._chars_since_usage = 0
        cost = cost_of(self.session.model, self.session.provider, usage.input_tokens, usage.output_tokens)
        self.session.add_usage(usage.input_tokens, usage.output_tokens, cost)
        self.emit(ev.Usage(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            total_input_tokens=self.session.input_tokens, total_output_tokens=self.session.output_tokens,
            cost=self.session.cost, turn_id=turn_id,
        ))

    def _keep_partial(self, state: TurnState) -> None:
        """Keep what was already said; a tool call without a result must not reach the history."""
        for call_id, name in state.streaming_calls.items():
            self._interrupted({"id": call_id, "name": name}, state.turn_id)
        state.streaming_calls.clear()
        partial = state.partial
        if not partial:
            return
        if partial.get("tool_calls"):
            finished = self.runner.finished_results
            results = [finished.get(c["id"]) or self._interrupted(c, state.turn_id) for c in partial["tool_calls"]]
            self._append([partial, *results])
        elif partial.get("content"):
            state.text.append(partial["content"])
            self._append([{"role": "assistant", "content": partial["content"]}])
        state.partial = None

    def _end(self, state: TurnState, reason: str) -> ev.TurnEnd:
        self.session.defer_records = False
        self.session.flush()
        if self.guard is not None:
            self.guard.end_turn()  # the "after" checkpoint: before turn_end, so views show it on the turn
        text = "\n\n".join(t.strip() for t in state.text if t.strip())
        end = ev.TurnEnd(reason=reason, text=text, steps=state.steps, turn_id=state.turn_id)
        self.emit(end)
        return end

    def reset_estimates(self) -> None:
        """After the wire history changes wholesale (compact, resume)."""
        self._wire_chars = sum(self.session.wire_sizes())
        self._last_input_tokens = None
        self._chars_since_usage = 0

    def _interrupted(self, call: dict[str, Any], turn_id: str) -> dict[str, Any]:
        """The result of a call cut by Abort: in the history for the model, and as its tool_result."""
        output = "interrupted: the turn was aborted before this call finished"
        self.emit(ev.ToolResult(name=call["name"], call_id=call["id"], output=output, is_error=True,
                                status="interrupted", turn_id=turn_id))
        return {"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": output,
                "is_error": True}
