"""The peers of bench/overhead.py, run in this process: openai-agents, pydantic-ai and mini-swe-agent.

Each runs the same session as nbagent's part one: ``steps`` calls of a trivial tool, then a final
answer, after a history of ``prior`` messages, with a scripted model of its own kind (the test doubles
the projects ship: agents.testing.ScriptedModel, pydantic_ai's FunctionModel, mini-swe-agent's
DeterministicModel). Overhead per step = wall time minus the time inside the model and the tool,
divided by the model calls. Install them with ``pip install -e '.[bench]'``; a peer that is not
installed is reported as missing, never replaced by a number typed in here.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Callable

TOOL_TIME = [0.0]
MODEL_TIME = [0.0]
CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""The clock every figure here and in bench/overhead.py reads: wall time, or the process's CPU time
(time.process_time, all threads) where bench/guard.py runs on a machine other people load too."""


def now() -> float:
    return CLOCK[0]()


def noop(value: int) -> str:
    """Return at once (the trivial tool of the benchmark).

    Args:
        value: anything
    """
    started = now()
    result = f"ok {value}"
    TOOL_TIME[0] += now() - started
    return result


def fresh_heap() -> None:
    """Collect before a timed run: the history built for it is old by then, as it is in a long session.

    Without it, the first collections inside the run walk the thousands of objects the setup just made
    (0.03 ms a step over a 2,000-message history): a cost of the bench's setup, not of a step."""
    gc.collect()


def history(n: int) -> list[dict]:
    out = []
    for i in range(n // 2):
        out.append({"role": "user", "content": f"question {i} " + "x" * 200})
        out.append({"role": "assistant", "content": f"answer {i} " + "y" * 200})
    return out


def _measure(run: Callable[[], None], steps: int) -> float:
    fresh_heap()
    TOOL_TIME[0] = MODEL_TIME[0] = 0.0
    started = now()
    run()
    wall = now() - started
    return (wall - MODEL_TIME[0] - TOOL_TIME[0]) / (steps + 1) * 1000


# ----- openai-agents ---------------------------------------------------------------------------

def openai_agents(steps: int, prior: int) -> float:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call

    set_tracing_disabled(True)  # no exporter here: its cost is not the loop's

    class Timed(ScriptedModel):
        async def get_response(self, *args, **kwargs):
            started = now()
            try:
                return await super().get_response(*args, **kwargs)
            finally:
                MODEL_TIME[0] += now() - started

    script = [[function_call("noop", {"value": i}, call_id=f"call_{i}")] for i in range(steps)]
    model = Timed([*script, [assistant_message("done")]])
    agent = Agent(name="bench", instructions="You run tools.", model=model, tools=[function_tool(noop)])
    items = [*history(prior), {"role": "user", "content": "go"}]

    def run() -> None:
        result = asyncio.run(Runner.run(agent, input=items, max_turns=steps + 2))
        assert result.final_output == "done", result.final_output

    return _measure(run, steps)


# ----- pydantic-ai -------------------------------------------------------------------------------

def pydantic_ai(steps: int, prior: int) -> float:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart)
    from pydantic_ai.models.function import FunctionModel

    calls = [0]

    def respond(messages, info) -> ModelResponse:
        started = now()
        i = calls[0]
        calls[0] += 1
        if i < steps:
            part = ToolCallPart(tool_name="noop", args={"value": i}, tool_call_id=f"call_{i}")
        else:
            part = TextPart(content="done")
        response = ModelResponse(parts=[part])
        MODEL_TIME[0] += now() - started
        return response

    agent = Agent(FunctionModel(respond), instructions="You run tools.")
    agent.tool_plain(noop)
    prior_messages = []
    for message in history(prior):
        if message["role"] == "user":
            prior_messages.append(ModelRequest(parts=[UserPromptPart(content=message["content"])]))
        else:
            prior_messages.append(ModelResponse(parts=[TextPart(content=message["content"])]))

    def run() -> None:
        from pydantic_ai.usage import UsageLimits

        result = agent.run_sync("go", message_history=prior_messages,
                                usage_limits=UsageLimits(request_limit=steps + 2))
        assert result.output == "done", result.output

    return _measure(run, steps)


# ----- mini-swe-agent ----------------------------------------------------------------------------

def mini_swe_agent(steps: int, prior: int) -> float:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.exceptions import Submitted
    from minisweagent.models.test_models import DeterministicModel

    class TimedModel(DeterministicModel):
        def query(self, messages, **kwargs):
            started = now()
            try:
                return super().query(messages, **kwargs)
            finally:
                MODEL_TIME[0] += now() - started

    class NoopEnvironment:
        """The benchmark's trivial tool as mini-swe-agent's environment: no subprocess per step."""

        def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict:
            command = action.get("command", "")
            if command == "submit":
                raise Submitted({"role": "exit", "content": "done",
                                 "extra": {"exit_status": "Submitted", "submission": "done"}})
            return {"output": noop(int(command.split()[-1])), "returncode": 0, "exception_info": ""}

        def get_template_vars(self, **kwargs) -> dict:
            return dict(kwargs)

        def serialize(self) -> dict:
            return {}

    earlier = history(prior)  # built before the clock starts, as the others' are

    class WithHistory(DefaultAgent):
        """Starts from ``prior`` messages after the system and task messages, as the others do."""

        def add_messages(self, *messages: dict) -> list[dict]:
            added = super().add_messages(*messages)
            if len(self.messages) == 2 and prior:
                self.messages[1:1] = earlier
            return added

    outputs = [{"role": "assistant", "content": f"noop {i}", "extra": {"actions": [{"command": f"noop {i}"}]}}
               for i in range(steps)]
    outputs.append({"role": "assistant", "content": "done", "extra": {"actions": [{"command": "submit"}]}})
    agent = WithHistory(TimedModel(outputs=outputs), NoopEnvironment(), system_template="You run tools.",
                        instance_template="{{task}}", step_limit=steps + 2, cost_limit=0)

    def run() -> None:
        result = agent.run("go")
        assert result.get("exit_status") == "Submitted", result

    return _measure(run, steps)


PEERS: dict[str, Callable[[int, int], float]] = {
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "mini-swe-agent": mini_swe_agent,
}


def available() -> dict[str, str | None]:
    """Each peer and why it cannot run here (None: it can)."""
    import importlib.util

    modules = {"openai-agents": "agents", "pydantic-ai": "pydantic_ai", "mini-swe-agent": "minisweagent"}
    return {name: None if importlib.util.find_spec(module) else f"not installed (pip install -e '.[bench]')"
            for name, module in modules.items()}
