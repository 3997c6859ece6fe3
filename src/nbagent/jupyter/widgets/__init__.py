"""The live view's widgets, one concept per module.

``live_state.LiveState`` holds the agent's state (agent_state.AgentState, kept by ``reduce``) that they
render. ``turn.TurnView`` renders one turn: header, its items in order (``timeline``: answer paragraphs,
reasoning, tool rows, notices), approval cards, todos, memory, checkpoint bar and controls;
``agent_view.AgentView`` follows every turn of an agent. ``throttle`` keeps the frontend traffic
bounded; ``format`` holds the HTML formatters."""
