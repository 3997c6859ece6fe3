"""Model profiles: what a model is given (prompt, tool sets, output cap, tool steps) for its size.

"full" is for real models: the whole system prompt, every configured tool set, the project's
instructions, memory and repo map. "small" is for the offline model (SmolLM2-135M on a CPU): its
first request must stay near 400 prompt tokens, because reading the full one (about 4,500 tokens
with ~28 tools) takes it some 40 s on two cores. So it gets a short prompt, the read-only "read"
tool set (list_dir, read_file, grep), a cap on each answer, shorter tool outputs, and tools on the
first model call of a turn only: after one round of tool results it answers in text instead of
calling on and on.

``AgentConfig.profile`` picks one: "auto" (small with the offline model, else full), "full" or
"small". The runtime applies the chosen profile to the configuration once (``apply``), so the
settings front ends show (tool sets on and off) are the ones in force.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import DEFAULT_TOOLSETS, AgentConfig


@dataclass(frozen=True)
class Profile:
    name: str
    toolsets: tuple[str, ...] | None
    """The tool sets it starts with when the configuration names the default ones (None: keep them)."""
    short_prompt: bool
    """The short system prompt (nbagent.engine.prompt.short_prompt) instead of the full one."""
    knowledge: bool
    """Instruction files, the repo map and memory in the prompt."""
    max_tokens: int | None
    """Tokens one answer may take (None: the endpoint's own limit)."""
    tool_steps: int | None
    """Model calls per turn that are offered tools (None: every one); later ones must answer in text."""
    max_steps: int | None
    """Model calls per turn, when the configuration keeps the default."""
    output_limit: int | None
    """Characters of one tool output on the wire, when the configuration keeps the default."""
    live_context: bool = True
    """Attached context's notes (the kernel's recent history, commands, files) and the block saying what
    is open in Jupyter go with the prompt. A toy model cannot use them: it repeats them back, and they
    make its prompt many times longer."""


FULL = Profile("full", toolsets=None, short_prompt=False, knowledge=True,
               max_tokens=None, tool_steps=None, max_steps=None, output_limit=None)
SMALL = Profile("small", toolsets=("read",), short_prompt=True, knowledge=False,
                max_tokens=320, tool_steps=1, max_steps=4, output_limit=6_000, live_context=False)
"""output_limit: a whole 30,000-character file would overflow the offline server's 8,192-token context."""
PROFILES = {p.name: p for p in (FULL, SMALL)}


def choose(config: AgentConfig, *, offline: bool) -> Profile:
    """The profile ``config`` asks for; "auto" means small for the offline model and full otherwise."""
    if config.profile == "auto":
        return SMALL if offline else FULL
    return PROFILES[config.profile]


def apply(profile: Profile, config: AgentConfig) -> AgentConfig:
    """``config`` with the profile's defaults where the configuration kept the general ones."""
    changes: dict = {"profile": profile.name}
    # The default tool sets, with or without the small profile's "read" put in front by validation.
    kept_default = tuple(t for t in config.toolsets if t != "read") == DEFAULT_TOOLSETS
    if profile.toolsets is not None and kept_default:
        changes["toolsets"] = profile.toolsets
    if profile.max_steps is not None and config.max_steps == AgentConfig.max_steps:
        changes["max_steps"] = profile.max_steps
    if profile.output_limit is not None and config.output_limit == AgentConfig.output_limit:
        changes["output_limit"] = profile.output_limit
    return config.with_changes(**changes)
