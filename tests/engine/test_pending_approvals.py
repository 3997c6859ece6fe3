"""PendingApprovals: the one place an approval request waits for its answer (the agent's and MCP's)."""

from __future__ import annotations

import asyncio
import typing

import pytest

from nbagent import events as ev
from nbagent.config import APPROVAL_MODES, POLICIES, UNATTENDED_MODES
from nbagent.tools.approvals import DECISIONS, PendingApprovals
from nbagent.tools.base import Tool


def test_an_answer_given_while_announcing_reaches_the_call():
    async def main():
        waiting = PendingApprovals()
        # The front end answers as soon as it sees the request: the call already waits.
        decision = await waiting.answer("c1", lambda: waiting.resolve("c1", "always"))
        return decision, waiting.call_ids

    assert asyncio.run(main()) == ("always", [])


def test_a_call_stops_waiting_on_timeout_and_on_cancel():
    async def main():
        waiting = PendingApprovals()
        with pytest.raises(asyncio.TimeoutError):
            await waiting.answer("late", timeout=0.01)
        task = asyncio.ensure_future(waiting.answer("gone"))
        await asyncio.sleep(0)
        assert waiting.call_ids == ["gone"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return waiting.call_ids, waiting.resolve("late", "approve"), waiting.resolve("gone", "deny")

    assert asyncio.run(main()) == ([], False, False)


def test_a_second_answer_is_refused():
    async def main():
        waiting = PendingApprovals()
        task = asyncio.ensure_future(waiting.answer("c1"))
        await asyncio.sleep(0)
        first, second = waiting.resolve("c1", "deny"), waiting.resolve("c1", "approve")
        return first, second, await task

    assert asyncio.run(main()) == (True, False, "deny")


def test_modes_policies_and_decisions_come_from_the_literals():
    assert APPROVAL_MODES == typing.get_args(ev.ApprovalMode) == ("ask", "auto", "read-only", "sandboxed")
    assert POLICIES == typing.get_args(ev.ApprovalPolicy)
    assert DECISIONS == typing.get_args(ev.Decision)
    assert set(UNATTENDED_MODES) == {"auto", "read-only"} < set(APPROVAL_MODES)  # sandboxed may ask
    assert typing.get_type_hints(Tool)["approval"] == ev.ApprovalPolicy
