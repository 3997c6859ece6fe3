"""The engine: the agent, its turns, prompt assembly, compaction and the typed front-end state."""
