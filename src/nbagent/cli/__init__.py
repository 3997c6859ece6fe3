"""The ``nbagent`` command: its subcommands and the terminal renderer of the event stream."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """The console script's entry point (``nbagent.cli:main``), kept beside ``nbagent.cli.app.main``."""
    from .app import main as run

    return run(argv)
