"""The built-in tool sets and the registry a turn offers the model.

core is always on (files, grep, glob, bash and the background-task tools
bash hands over to); edit-plus, git, todos, memory and notebook are on by
default and can be switched off; kernel is offered only inside a kernel.
"read" (list_dir, read_file, grep: look, change nothing) is what the small
profile (nbagent.engine.profiles) starts with and keeps on instead of core.
"""

from __future__ import annotations

from typing import Any, Iterable

from .base import Registry, Tool, ToolSet, as_tool, function_tool, tool

__all__ = ["Registry", "Tool", "ToolSet", "as_tool", "build_registry", "builtin_toolsets", "function_tool",
           "tool"]


def builtin_toolsets(*, kernel: Any = None, memory: bool = True) -> list[ToolSet]:
    from .attached import CONTEXT
    from .files import CORE_FILE_TOOLS, EDIT_PLUS
    from .git import GIT
    from .notebook import NOTEBOOK
    from .search import GREP_TOOL
    from .shell import BASH_TOOL
    from .tasks import TASKS
    from .todos import TODOS

    core = ToolSet("core", [*CORE_FILE_TOOLS, GREP_TOOL, BASH_TOOL, *TASKS.tools], always_on=True)
    sets = [core, CONTEXT, EDIT_PLUS, GIT, TODOS, NOTEBOOK, _read_toolset()]
    if memory:
        sets.append(_memory_toolset())
    if kernel is not None:
        from .kernel import KERNEL

        sets.append(KERNEL)
    return sets


def _memory_toolset() -> ToolSet:
    # Not imported in builtin_toolsets itself: there the submodule's name would shadow its ``memory`` flag.
    from .memory import MEMORY

    return MEMORY


def _read_toolset() -> ToolSet:
    from dataclasses import replace

    from .files import LIST_DIR, READ_FILE
    from .search import GREP_TOOL

    # Copies: a ToolSet names itself on its tools, and these also belong to core and edit-plus.
    return ToolSet("read", [replace(t) for t in (LIST_DIR, READ_FILE, GREP_TOOL)],
                   description="Look, change nothing: list_dir, read_file, grep.")


def build_registry(config, *, extra_tools: Iterable[Any] = (), kernel: Any = None) -> Registry:
    sets = builtin_toolsets(kernel=kernel, memory=config.memory)
    # The small profile keeps "read" on instead of the always-on sets (core, context).
    always_on = ("read",) if getattr(config, "profile", "full") == "small" else None
    return Registry(sets, tuple(config.toolsets), extra=[as_tool(t) for t in extra_tools], always_on=always_on)
