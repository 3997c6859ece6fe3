"""The ``nbagent`` command: its subcommands and the terminal renderer of the event stream."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """The console script's entry point (``nbagent.cli:main``), kept beside ``nbagent.cli.app.main``."""
    import sys

    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["acp"]:  # an editor waits for its first answer: none of the other commands' imports
        from .acp import run_acp

        return run_acp()
    from ..workspace.lean_imports import without_iri_format_check
    from .app import main as run

    without_iri_format_check()  # the first notebook tool or check imports nbformat: not 1.5-5 s of it
    return run(argv)
