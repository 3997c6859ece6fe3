"""Knowledge around the conversation: instruction files, hybrid project memory, the repo map, telemetry.

Each submodule owns one concept; the runtime asks them for prompt blocks once per turn
(instructions, repo map) or per step (relevant memory), and nothing here blocks the
event loop on an embedding.
"""
