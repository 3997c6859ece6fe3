"""The ``nbagent`` console script: ``nbagent run "..."`` and ``nbagent sessions ...``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import events as ev
from .errors import NbagentError


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return args.handler(args)
    except NbagentError as exc:
        print(f"nbagent: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nbagent", description="An AI coding agent for Jupyter workspaces.")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one prompt on a workspace and stream the answer")
    run.add_argument("prompt", help="what to do (use - to read it from standard input)")
    run.add_argument("--workspace", "-w", help="workspace root (default: the current directory)")
    run.add_argument("--model", "-m", help="model name (env NBAGENT_MODEL)")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    run.add_argument("--api", choices=["chat", "responses"], help="wire protocol (env NBAGENT_API)")
    run.add_argument("--yes", "-y", action="store_true", help="approve every tool call (approval auto)")
    run.add_argument("--approval", choices=["ask", "auto", "read-only"], help="approval mode")
    run.add_argument("--toolsets", help="comma-separated tool sets (core is always on)")
    run.add_argument("--max-steps", type=int, help="model calls per turn (default 50)")
    run.add_argument("--no-memory", action="store_true", help="neither load nor write project memory")
    group = run.add_mutually_exclusive_group()
    group.add_argument("--continue", "-c", dest="cont", action="store_true",
                       help="continue the newest session of this directory")
    group.add_argument("--session", "-s", help="resume the session with this id (or unique prefix)")
    run.add_argument("--quiet", "-q", action="store_true", help="print only the answer")
    run.set_defaults(handler=_run)
    try:
        from .cli_sessions import add_sessions_parser
    except ImportError:
        pass
    else:
        add_sessions_parser(sub)
    from .cli_checkpoints import add_checkpoint_parsers

    add_checkpoint_parsers(sub)
    return parser


def _run(args: argparse.Namespace) -> int:
    from .agent import Agent

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    approval = "auto" if args.yes else args.approval
    session = "continue" if args.cont else args.session
    agent = Agent(workspace=args.workspace, model=args.model, base_url=args.base_url, api=args.api,
                  approval=approval, toolsets=args.toolsets, max_steps=args.max_steps, session=session,
                  memory=False if args.no_memory else None, approver=_terminal_approver)
    printer = _Printer(quiet=args.quiet)
    reason = "error"
    try:
        for event in agent.stream(prompt):
            printer.show(event)
            if isinstance(event, ev.TurnEnd):
                reason = event.reason
    except KeyboardInterrupt:
        agent.abort()
        print("\naborted", file=sys.stderr)
        return 130
    finally:
        agent.close()
    return 0 if reason == "done" else 1


def _terminal_approver(request: ev.ApprovalRequest) -> str:
    """Ask on the terminal; with no terminal to ask on, deny (use --yes to approve all)."""
    if not sys.stdin.isatty():
        print(f"\n[denied {request.name}: no terminal to ask; run with --yes to approve]", file=sys.stderr)
        return "deny"
    print(f"\n? {request.name} {_summary(request.arguments)}", file=sys.stderr)
    if request.diff:
        print(request.diff, file=sys.stderr)
    answer = input("approve? [y]es / [n]o / [a]lways: ").strip().lower()
    return {"y": "approve", "yes": "approve", "a": "always", "always": "always"}.get(answer, "deny")


def _summary(arguments: dict, limit: int = 100) -> str:
    text = " ".join(f"{k}={v!r}" for k, v in arguments.items()).replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Printer:
    """Answer text on stdout; tool activity, reasoning markers and errors on stderr."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.thinking = False

    def show(self, event: ev.Event) -> None:
        out, err = sys.stdout, sys.stderr
        if isinstance(event, ev.TextDelta):
            out.write(event.text)
            out.flush()
        elif self.quiet:
            if isinstance(event, ev.Error):
                print(f"\nerror: {event.message}", file=err)
        elif isinstance(event, ev.ReasoningDelta) and not self.thinking:
            self.thinking = True
            print("(thinking…)", file=err)
        elif isinstance(event, ev.ToolCall):
            print(f"\n→ {event.name} {_summary(event.arguments)}", file=err)
        elif isinstance(event, ev.ToolResult):
            first = (event.output.strip().splitlines() or [""])[0][:100]
            print(f"  {'✗' if event.is_error else '✓'} {event.status}: {first}", file=err)
        elif isinstance(event, ev.Error):
            print(f"\nerror: {event.message}", file=err)
        elif isinstance(event, ev.Compacted):
            print(f"({event.message})", file=err)
        elif isinstance(event, ev.TurnEnd):
            out.write("\n")
            if event.reason != "done":
                print(f"(turn ended: {event.reason})", file=err)


if __name__ == "__main__":
    sys.exit(main())
