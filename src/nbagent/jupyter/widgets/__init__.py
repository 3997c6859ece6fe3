"""The live view's widgets, one concept per module.

Header, answer, reasoning, tool calls, todos, memory, approval card, controls; ``turn.TurnView`` puts
them together for one turn and ``agent_view.AgentView`` follows every turn of an agent. ``throttle``
and ``coalesce`` keep the frontend traffic bounded; ``format`` holds the HTML formatters."""
