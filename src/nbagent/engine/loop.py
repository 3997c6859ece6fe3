"""One turn: build the request, stream the model, run its tool calls, repeat.

The turn ends when the model answers without tool calls (done), the user
aborts (aborted), a model call fails for good (error), or ``max_steps`` model
calls have been made (max_steps). Every completed step is appended to the
session (durable) before the next model call.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable

import orjson

from .. import events as ev
from ..errors import ModelError
from ..model.base import (AFTER_SEND, Model, ModelRequest, ReasoningChunk, ResponseDone, TextChunk, ToolCallArgs, ToolCallBegin, UsageInfo)
from ..model.cost import cost_of
from .profiles import FULL, Profile
from .open_in_jupyter import without_context
from .compaction import cut_index, message_chars, repair, stripped_prefix
from .request_context import RequestContext, with_note
from .vision import REFUSED_KIND, Vision
from ..images.window import windowed
from ..model.served_context import ServedContext
from ..tools.runner import ToolRunner

log = logging.getLogger(__name__)


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

    def __init__(self, *, model: Model, session, registry, config, emit: Callable[[ev.AnyEvent], None],
                 runner: ToolRunner, context: RequestContext, guard=None,
                 before_prompt: Callable[[str], list[dict[str, Any]]] | None = None, profile: Profile = FULL):
        self.model = model
        self.profile = profile
        """nbagent.engine.profiles: the answer cap and how many calls of a turn are offered tools."""
        self.session = session
        self.registry = registry
        self.config = config
        self.emit = emit
        self.runner = runner
        self.context = context
        """The stable system prompt, and the live notes that go on the newest message."""
        self.guard = guard
        """nbagent.checkpoints.turn_guard.TurnGuard: checkpoints and the recovery journal (None: neither)."""
        self.before_prompt = before_prompt
        """Called with the turn id once the turn has started, before its prompt is added: the attached
        context's notes go in there (between turns, never mid-turn). Returns the messages it appended."""
        self._last_input_tokens: int | None = None
        self._chars_since_usage = 0
        self._pruned_to: int | None = None
        self.served: ServedContext | None = None
        """The context the server really serves (nbagent.model.served_context), once it said."""
        self._warned_fit: int | None = None
        self._unwritten_start = False
        self.while_sending: list[Callable[[], object]] = []
        """Writes for the turn about to start that need not delay its first request (the prompt history):
        run with the turn's own start while that request is on the way, or at the turn's end."""
        self._fixed: tuple[tuple[str, tuple[str, ...]], list, int] | None = None
        """For _fixed_tokens: (system prompt and tool names, the tool list last seen, their tokens)."""
        self.vision = Vision()
        """Whether requests carry images (nbagent.engine.vision); it remembers an endpoint's refusal."""
        self._cut: int | None = None
        """Where the last automatic pruning cut the wire history: kept until the request overflows
        again, so the pruned request stays a prefix of the next one (pruning anew at every step would
        rewrite the history each time and defeat the provider's prompt cache)."""
        self._older: tuple[list[dict[str, Any]], int] = ([], 0)
        """For ``_cut``: the messages before it as pruning keeps them, and their characters. Made once
        per cut (the messages before a cut never change), so that a step costs the same on a long
        history as on a short one (tests/engine/test_flat_steps.py)."""

    async def run_turn(self, prompt: str, turn_id: str, attached: Any = None) -> ev.TurnEnd:
        """``attached``: what the user attached to the prompt (nbagent.engine.attachments.Attached)."""
        if not self.profile.live_context:  # the small profile: the words typed, nothing a toy model repeats
            prompt = without_context(prompt)
        state = TurnState(turn_id)
        self.session.defer_records = True  # records ride along with each step's commit
        self.session.begin_turn(prompt)
        self.emit(ev.TurnStart(prompt=prompt, session_id=self.session.id, title=self.session.title,
                               turn_id=turn_id))
        if self.guard is not None:
            self.guard.begin_turn(self.session.turns, turn_id)
        if self.before_prompt is not None:
            self._count(self.before_prompt(turn_id))
        body = f"{prompt}\n\n{attached.text}" if attached is not None and attached.text else prompt
        message: dict[str, Any] = {"role": "user", "content": with_note(body, self.context.turn_note(prompt, turn_id))}
        if attached is not None and attached.images:
            message["images"] = [i.to_dict() for i in attached.images]
        # The turn's start is written while its first request is on the way (_call_model), not before it.
        self.session.append_soon([message])
        self._count([message])
        self._unwritten_start = True
        try:
            reason = await self._steps(state)
        except asyncio.CancelledError:
            self._keep_partial(state)
            return self._end(state, "aborted")
        except ModelError as exc:
            self._keep_partial(state)
            self.emit(ev.Error(message=str(exc), kind=exc.kind, status_code=exc.status_code, turn_id=turn_id))
            return self._end(state, "error")
        return self._end(state, reason)

    async def _steps(self, state: TurnState) -> ev.TurnEndReason:
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
            note = self.context.step_note(state.turn_id)
            if note and results:
                results[-1] = {**results[-1], "content": with_note(results[-1].get("content") or "", note)}
            self._append([message, *results])
        return "max_steps"

    async def _call_model(self, state: TurnState) -> dict[str, Any]:
        request = self._request(state.turn_id, state.steps)
        if self._unwritten_start:
            # Once the request is written (the HTTP client's hook), so that the commits of the turn's start
            # overlap the model's answer instead of delaying the request; a model with no HTTP request (or
            # an answer faster than the hook) has them at its first chunk (_stream).
            AFTER_SEND.set(self._write_start)
        try:
            return await self._stream(request, state)
        except ModelError as exc:
            # A request with images the endpoint refused, before anything streamed: once without them.
            said = bool((state.partial or {}).get("content") or state.streaming_calls)
            if said or not self.vision.carried(request.messages) or not Vision.is_refusal(exc):
                raise
            note = self.vision.refuse(exc)
            try:
                message = await self._stream(replace(request, messages=windowed(request.messages, 0)), state)
            except ModelError:
                self.vision.refused = None  # not the images' fault after all
                raise
            self.emit(ev.Error(message=note, kind=REFUSED_KIND, status_code=exc.status_code, turn_id=state.turn_id))
            return message

    async def _stream(self, request: ModelRequest, state: TurnState) -> dict[str, Any]:
        state.partial = {"role": "assistant", "content": ""}
        streamed: list[str] = []
        names: dict[int, tuple[str, str]] = {}
        done: ResponseDone | None = None
        emit, tid = self.emit, state.turn_id
        async for chunk in self.model.stream(request):
            if self._unwritten_start:
                self._write_start()
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
                self._usage(chunk, tid, self.vision.carried(request.messages))
            elif isinstance(chunk, ResponseDone):
                done = chunk
        if done is None:
            raise ModelError("the model stream ended without a final response", kind="stream_broken")
        state.text.append("".join(streamed))
        state.streaming_calls.clear()
        return done.message

    def _request(self, turn_id: str, step: int = 1) -> ModelRequest:
        offer_tools = self.profile.tool_steps is None or step <= self.profile.tool_steps
        system, tools = self.context.system(), self.registry.specs() if offer_tools else []
        fixed = self._fixed_tokens(system, tools)
        budget = self._history_budget(fixed)
        # Usage counts the whole request; the budget is the history's, so the tools and system prompt
        # are taken out (else a pruned history still "overflows" and is cut again at every step).
        estimate = self._estimate_tokens()
        if self._last_input_tokens is not None:
            estimate -= fixed
        if estimate > budget:
            messages = self._pruned(turn_id, budget, fixed)
        elif self._cut is not None:
            messages = self._cut_request()
        else:
            messages = self.session.wire_messages()  # the log's own list: window() hands on a copy
        messages = self.vision.window(self.config, self.model, messages, self.served)
        self._check_fit(fixed + self._sent_chars() // 4, turn_id)
        return ModelRequest(
            system=system, messages=messages, tools=tools, max_tokens=self.profile.max_tokens,
            temperature=self.config.temperature, reasoning_effort=self.config.reasoning_effort,
            cache_key=self.session.id,
        )

    def _fixed_tokens(self, system: str, tools: list[dict[str, Any]]) -> int:
        """The system prompt's and the tools' share of a request (about four characters a token);
        computed again only when they change, which within a session is rare."""
        fixed = self._fixed
        if fixed is not None and fixed[1] is tools and fixed[0][0] is system:  # the same objects: at once
            return fixed[2]
        key = (system, tuple(t["name"] for t in tools))
        tokens = fixed[2] if fixed is not None and fixed[0] == key else (len(system) + len(orjson.dumps(tools))) // 4
        self._fixed = (key, tools, tokens)
        return tokens

    def _history_budget(self, fixed: int) -> int:
        """Tokens the history may take before pruning: the configured threshold, and below the
        context the server serves, with room for the tools, the system prompt and the answer."""
        if self.served is None:
            return self.config.compact_threshold
        room = int(self.served.tokens * 0.8) - fixed - (self.profile.max_tokens or 0)
        return max(256, min(self.config.compact_threshold, room))

    def _check_fit(self, tokens: int, turn_id: str) -> None:
        """Say once, before sending, that a request will not fit the context the server serves."""
        served = self.served
        if served is None or tokens <= served.tokens or self._warned_fit == served.tokens:
            return
        self._warned_fit = served.tokens
        self.emit(ev.Error(
            message=f"this request is about {tokens:,} tokens but {served.server} serves {served.model} with a "
                    f"context of {served.tokens:,} tokens: the start of the request (instructions, tools) "
                    f"would be cut off. Fix: {served.fix(tokens)}",
            kind="context_fit", turn_id=turn_id))

    def _pruned(self, turn_id: str, budget: int, fixed: int) -> list[dict]:
        # compaction.prune, sized without reading what a resume left in the store: before the cut,
        # messages are cut down to what their heads hold, so only the kept ones are read whole.
        sizes = self.session.wire_sizes()
        cut = self._cut = cut_index(sizes, budget)
        wire = self.session.wire_messages(loaded_from=cut)
        older = stripped_prefix(wire, cut)
        self._older = (older, sum(message_chars(m) for m in older))
        wire = older + repair(wire[cut:])
        # Until the server reports the pruned request's size, estimate it, or the next step would
        # measure the whole history again and cut anew.
        self._last_input_tokens, self._chars_since_usage = fixed + self._sent_chars() // 4, 0
        before = len(sizes)
        if len(wire) < before and len(wire) != self._pruned_to:
            self._pruned_to = len(wire)
            self.emit(ev.Compacted(
                before=before, after=len(wire), turn_id=turn_id,
                message=f"context compacted: {before} messages pruned to {len(wire)} on the wire",
            ))
        return wire

    def _cut_request(self) -> list[dict]:
        """The request at the kept cut: the pruned messages before it as made at the cut, then the rest."""
        assert self._cut is not None
        return self._older[0] + repair(self.session.wire_messages(loaded_from=self._cut)[self._cut:])

    def _sent_chars(self) -> int:
        """Characters of this step's request history, from running totals (never by reading every
        message): the whole wire history, or at a cut its pruned part and what follows."""
        if self._cut is None:
            return self.session.wire_chars()
        return self._older[1] + self.session.wire_chars(self._cut)

    def _estimate_tokens(self) -> int:
        # Once the API has reported usage, trust it and add only what came since.
        if self._last_input_tokens is not None:
            return self._last_input_tokens + self._chars_since_usage // 4
        return self.session.wire_chars() // 4

    def _append(self, messages: list[dict[str, Any]]) -> None:
        self.session.append(messages)
        if self.guard is not None:
            self.guard.step_durable(messages)
        self._count(messages)

    def _count(self, messages: list[dict[str, Any]]) -> None:
        self._chars_since_usage += sum(message_chars(m) for m in messages)

    def _usage(self, usage: UsageInfo, turn_id: str, image_tokens: int = 0) -> None:
        """Record a call's usage; ``image_tokens`` is the estimate for the images its request carried
        (a part of the input tokens the provider reports, shown apart; the cost is the provider's)."""
        self._last_input_tokens = usage.input_tokens + usage.output_tokens
        self._chars_since_usage = 0
        cached = min(usage.cached_tokens, usage.input_tokens)
        images = min(image_tokens, usage.input_tokens) if usage.input_tokens else image_tokens
        cost = cost_of(self.session.model, self.session.provider, usage.input_tokens, usage.output_tokens,
                       cached_tokens=cached)
        self.session.add_usage(usage.input_tokens, usage.output_tokens, cost, cached, images)
        self.emit(ev.Usage(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cached_tokens=cached,
            total_input_tokens=self.session.input_tokens, total_output_tokens=self.session.output_tokens,
            total_cached_tokens=self.session.cached_tokens, cost=self.session.cost, turn_id=turn_id,
            image_tokens=images, total_image_tokens=self.session.image_tokens,
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

    def _write_start(self) -> None:
        """The turn's start made durable: its count and prompt (Session.append_soon, one commit with the
        records waiting), then ``while_sending`` (the prompt history). Once a turn; a failure is logged and
        what waited stays for the next step's append, which meets the same store and fails the turn."""
        if not self._unwritten_start:
            return
        self._unwritten_start = False
        try:
            self.session.flush()
            for write in self.while_sending:
                write()
        except Exception:  # noqa: BLE001 - on the event loop, outside the turn: said, not raised
            log.exception("the turn's start could not be written")
        finally:
            self.while_sending = []

    def _end(self, state: TurnState, reason: ev.TurnEndReason) -> ev.TurnEnd:
        self._write_start()  # a turn that ended before its first request
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
        self._last_input_tokens = None
        self._chars_since_usage = 0
        self._cut = None
        self._older = ([], 0)

    def _interrupted(self, call: dict[str, Any], turn_id: str) -> dict[str, Any]:
        """The result of a call cut by Abort: in the history for the model, and as its tool_result."""
        output = "interrupted: the turn was aborted before this call finished"
        self.emit(ev.ToolResult(name=call["name"], call_id=call["id"], output=output, is_error=True,
                                status="interrupted", turn_id=turn_id))
        return {"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": output,
                "is_error": True}
