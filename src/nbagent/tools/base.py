"""Tools: plain typed Python functions with docstrings, turned into JSON-schema tools.

A built-in tool takes a ``ctx: ToolContext`` first parameter (left out of the
schema); a user tool passed as ``Agent(tools=[fn])`` need not. The schema is
derived from the signature with pydantic; a parameter without a type hint is
an error at registration, as is a function without a docstring.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, overload

import pydantic

from .approvals import check_policy
from ..errors import ToolError, ToolRegistrationError
from ..events import ApprovalPolicy

RUNS = ("", "sandbox", "kernel", "outside")

if typing.TYPE_CHECKING:
    from .context import ToolContext


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    toolset: str = "custom"
    read_only: bool = False
    """Changes nothing: calls of read-only tools in one response may run concurrently."""
    approval: ApprovalPolicy = "ask"
    """The approval policy (nbagent.tools.approvals): "never", "ask" or "always_ask"."""
    preview: Callable[..., str | None] | None = None
    """``preview(ctx, **args)`` returns the diff an approval card shows, computed before any write."""
    takes_context: bool = False
    is_async: bool = False
    validator: Any = field(default=None, repr=False)
    prompt_hint: str = ""
    """One line for the system prompt on when to use the tool."""
    runs: str = ""
    """What code the tool starts (one of RUNS): "" none; "sandbox" a process nbagent confines (bash,
    tasks, notebook_check's kernel); "kernel" code in a kernel nbagent does not confine (kernel_run,
    notebook_run); "outside" another program's code (an MCP server's tool)."""

    def __post_init__(self) -> None:
        # The class follows from what the tool does: a tool that starts code is never read-only (read-only
        # mode denies it; MCP hints say it is not), whatever it declares.
        if self.runs not in RUNS:
            raise ValueError(f"runs must be one of {RUNS}, not {self.runs!r}")
        if self.runs:
            self.read_only = False

    @property
    def effect(self) -> str:
        """"run" (starts code), "read" (changes nothing) or "change"."""
        return "run" if self.runs else "read" if self.read_only else "change"

    def spec(self) -> dict[str, Any]:
        """The tool as the model sees it (provider-neutral)."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check and coerce the model's arguments; a mismatch is a ToolError the model can fix."""
        try:
            model = self.validator.model_validate(arguments)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None
        return {k: getattr(model, k) for k in model.model_fields_set | _required(self.validator)}


def _required(model: type[pydantic.BaseModel]) -> set[str]:
    return {name for name, f in model.model_fields.items() if f.is_required()}


@overload
def function_tool(fn: Callable[..., Any], *, name: str | None = None, toolset: str = "custom",
                  read_only: bool = False, approval: ApprovalPolicy | None = None,
                  preview: Callable[..., str | None] | None = None, prompt_hint: str = "",
                  needs_approval: bool | None = None, runs: str = "") -> Tool: ...


@overload
def function_tool(fn: None = None, *, name: str | None = None, toolset: str = "custom",
                  read_only: bool = False, approval: ApprovalPolicy | None = None,
                  preview: Callable[..., str | None] | None = None, prompt_hint: str = "",
                  needs_approval: bool | None = None, runs: str = "") -> Callable[[Callable[..., Any]], Tool]: ...


def function_tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    toolset: str = "custom",
    read_only: bool = False,
    approval: ApprovalPolicy | None = None,
    preview: Callable[..., str | None] | None = None,
    prompt_hint: str = "",
    needs_approval: bool | None = None,
    runs: str = "",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a Tool from a typed function; usable bare or with options, as a decorator or a call.

    ``approval`` is the tool's policy ("never", "ask", "always_ask"); by default a read-only tool
    never asks and any other asks. ``needs_approval`` (True: "ask", False: "never") is the older
    spelling of the same choice, still accepted. ``runs`` says what code the tool starts (Tool.runs);
    such a tool is never read-only, whatever ``read_only`` says.
    """
    if approval is None:
        approval = ("ask" if needs_approval else "never") if needs_approval is not None else (
            "never" if read_only and not runs else "ask")
    approval = check_policy(approval)
    if runs and approval == "never":
        approval = "ask"  # code that says it needs no approval asks all the same (the user can still say so)

    def build(func: Callable[..., Any]) -> Tool:
        return _build_tool(func, name, toolset, read_only, approval, preview, prompt_hint, runs)

    return build(fn) if fn is not None else build


tool = function_tool


def _build_tool(func, name, toolset, read_only, approval, preview, prompt_hint, runs="") -> Tool:
    tool_name = name or func.__name__
    doc = inspect.getdoc(func)
    if not doc:
        raise ToolRegistrationError(f"tool {tool_name!r} needs a docstring: it is the model's only guide")
    summary, arg_docs = _parse_docstring(doc)
    hints = typing.get_type_hints(func, include_extras=True)
    params = list(inspect.signature(func).parameters.values())
    takes_context = bool(params) and params[0].name == "ctx"
    fields_: dict[str, Any] = {}
    for p in params[1:] if takes_context else params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ToolRegistrationError(f"tool {tool_name!r}: *args and **kwargs cannot be described to a model")
        if p.name not in hints:
            raise ToolRegistrationError(f"tool {tool_name!r}: parameter {p.name!r} has no type hint")
        default = ... if p.default is p.empty else p.default
        fields_[p.name] = (hints[p.name], pydantic.Field(default, description=arg_docs.get(p.name)))
    validator = pydantic.create_model(
        f"{tool_name}_args", __config__=pydantic.ConfigDict(extra="forbid"), **fields_
    )
    schema = lean_schema(_clean_schema(validator.model_json_schema()))
    return Tool(
        name=tool_name, description=one_paragraph_lines(summary), parameters=schema, fn=func, toolset=toolset,
        read_only=read_only, approval=approval, preview=preview,
        takes_context=takes_context, is_async=inspect.iscoroutinefunction(func),
        validator=validator, prompt_hint=prompt_hint, runs=runs,
    )


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs`` references and drop pydantic's titles.

    Titles cost tokens and tell the model nothing; small local models often
    mishandle ``$ref``. Built-in tool arguments are never recursive, but an MCP
    server's schema may be: a reference met again inside its own expansion
    becomes ``{}`` (any value). Property *names* are kept, "title" included.
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def clean(node: Any, seen: frozenset[str], properties: bool = False) -> Any:
        if isinstance(node, dict):
            if properties:  # keys are argument names here, not schema keywords
                return {k: clean(v, seen) for k, v in node.items()}
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
                key = ref.rsplit("/", 1)[1]
                if key in seen or key not in defs:
                    return {}
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return clean({**defs[key], **extra}, seen | {key})
            return {k: clean(v, seen, properties=k in ("properties", "patternProperties"))
                    for k, v in node.items() if k not in ("title", "$defs", "definitions")}
        if isinstance(node, list):
            return [clean(v, seen) for v in node]
        return node

    return clean(schema, frozenset())


def lean_schema(node: Any) -> Any:
    """A built-in tool's schema without what tells the model nothing, since every request repeats it:
    an optional argument is ``{"type": "string"}``, not ``anyOf`` the type and null with a null
    default (it is optional because it is not required), and no ``additionalProperties: false`` (the
    validator refuses unknown arguments with a message the model can act on)."""
    if isinstance(node, list):
        return [lean_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: lean_schema(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    variants = out.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants and out.get("default", 0) is None:
        (kept,) = [v for v in variants if v != {"type": "null"}]
        rest = {k: v for k, v in out.items() if k not in ("anyOf", "default")}
        out = {**kept, **rest}
    return out


def one_paragraph_lines(text: str) -> str:
    """A docstring's lines joined into paragraphs: its line wraps are for the source, not the model."""
    return "\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip())


_ARGS_HEADER = re.compile(r"^(Args|Arguments|Parameters):\s*$", re.M)
_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument help.

    Written by hand because the one format we accept is small; griffe would
    add a dependency for three regular expressions' worth of parsing.
    """
    match = _ARGS_HEADER.search(doc)
    if not match:
        return doc.strip(), {}
    summary = doc[: match.start()].strip()
    args: dict[str, str] = {}
    current = None
    for line in doc[match.end():].splitlines():
        m = _ARG_LINE.match(line)
        if m:
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current and line.startswith("    ") and line.strip():
            args[current] += " " + line.strip()
        elif line.strip() and not line.startswith(" "):
            break  # the next section (Returns:, Raises:) ends the arguments
    return summary, args


class ToolSet:
    """A named group of tools switched on and off together."""

    def __init__(self, name: str, tools: list[Tool], description: str = "", always_on: bool = False):
        self.name = name
        self.tools = tools
        self.description = description
        self.always_on = always_on
        for t in tools:
            t.toolset = name


class Registry:
    """The tools a turn may offer: tool sets filtered by the configuration, plus user tools."""

    def __init__(self, toolsets: list[ToolSet], enabled: tuple[str, ...], extra: Sequence[Tool] = (),
                 always_on: Sequence[str] | None = None):
        """``always_on`` names the tool sets on whatever ``enabled`` says (None: those flagged so)."""
        self.toolsets = {ts.name: ts for ts in toolsets}
        self.enabled = tuple(n for n in enabled if n in self.toolsets)
        self._tools: dict[str, Tool] = {}
        self._specs: list[dict[str, Any]] | None = None
        """specs() as last built: the same list until the tools change (each model call asks for it)."""
        for ts in toolsets:
            on = ts.name in always_on if always_on is not None else ts.always_on
            if on or ts.name in enabled:
                for t in ts.tools:
                    self._add(t)
        for t in extra:
            self._add(t)

    def add_toolset(self, ts: ToolSet) -> None:
        """Add an enabled tool set after the registry was built (an MCP server's, empty until listed)."""
        self.toolsets[ts.name] = ts
        if ts.name not in self.enabled:
            self.enabled = (*self.enabled, ts.name)
        for t in ts.tools:
            self._add(t)

    def replace_tools(self, toolset: str, tools: list[Tool]) -> None:
        """Swap the tools of ``toolset`` (an MCP server's, once listed); other tool sets stay."""
        self._tools = {n: t for n, t in self._tools.items() if t.toolset != toolset}
        self._specs = None
        self.toolsets[toolset].tools = tools
        for t in tools:
            t.toolset = toolset
            self._add(t)

    def _add(self, t: Tool) -> None:
        if t.name in self._tools and self._tools[t.name].fn is t.fn:
            return  # the same tool from two tool sets ("read" and core): offered once
        if t.name in self._tools:
            raise ToolRegistrationError(f"two tools are named {t.name!r}")
        self._tools[t.name] = t
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """The tools as the model sees them, in order: one list, built again only when the tools change
        (callers read it, never change it; the loop's request sizing keys on its identity)."""
        if self._specs is None:
            self._specs = [t.spec() for t in self._tools.values()]
        return self._specs


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    return obj if isinstance(obj, Tool) else function_tool(obj)
