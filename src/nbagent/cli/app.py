"""The ``nbagent`` console script: ``nbagent run "..."`` and ``nbagent sessions ...``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import events as ev
from ..errors import NbagentError
from .terminal import Rendered, TerminalApprover, TerminalRenderer, ask_on_stderr


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
    # Options every command takes, accepted before and after the command (``nbagent sessions list -w X``).
    # SUPPRESS: a default given at one level would overwrite a value given at another.
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--workspace", "-w", default=argparse.SUPPRESS,
                        help="workspace root (default: the current directory)")
    parser = argparse.ArgumentParser(prog="nbagent", description="An AI coding agent for Jupyter workspaces.",
                                     parents=[shared])
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one prompt on a workspace and stream the answer", parents=[shared])
    run.add_argument("prompt", help="what to do (use - to read it from standard input)")
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
    run.add_argument("--markdown", choices=["auto", "always", "never"], default="auto",
                     help="render the answer's Markdown for the terminal (auto: when stdout is a terminal)")
    run.set_defaults(handler=_run)
    try:
        from .sessions import add_sessions_parser
    except ImportError:
        pass
    else:
        add_sessions_parser(sub, parents=[shared])
    from .attached import add_context_parser

    add_context_parser(sub, parents=[shared])
    from .mcp import add_mcp_parser

    add_mcp_parser(sub, parents=[shared])
    from .checkpoints import add_checkpoint_parsers

    add_checkpoint_parsers(sub, parents=[shared])
    from .knowledge import add_knowledge_parsers

    add_knowledge_parsers(sub, parents=[shared])
    from .batch import add_batch_parser

    add_batch_parser(sub, parents=[shared])
    from .eval import add_eval_parser

    add_eval_parser(sub, parents=[shared])
    return parser


def _run(args: argparse.Namespace) -> int:
    from ..engine.agent import Agent

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    approval = "auto" if args.yes else args.approval
    session = "continue" if args.cont else args.session
    agent = Agent(workspace=getattr(args, "workspace", None), model=args.model, base_url=args.base_url,
                  api=args.api, approval=approval, toolsets=args.toolsets, max_steps=args.max_steps,
                  session=session, memory=False if args.no_memory else None)
    markdown = args.markdown == "always" or (args.markdown == "auto" and sys.stdout.isatty())
    # Like every front end, the terminal starts from the agent's state and applies the turn's events.
    renderer = TerminalRenderer(markdown=markdown, quiet=args.quiet, state=agent.snapshot())
    # The question goes to stderr and the answer is read from stdin, when stdin is a terminal.
    approver = TerminalApprover(ask_on_stderr if sys.stdin.isatty() else None,
                                unattended="run with --yes to approve, or --approval read-only")
    reason = "error"
    usage: list[ev.Usage] = []
    try:
        for event in agent.stream(prompt):
            _print(renderer.render(event))
            if isinstance(event, ev.ApprovalRequest):
                agent.decide(event.call_id, approver(event))
            if isinstance(event, ev.Usage):
                usage.append(event)
            if isinstance(event, ev.TurnEnd):
                reason = event.reason
                if usage and not args.quiet:
                    print(usage_summary(usage), file=sys.stderr)
    except KeyboardInterrupt:
        agent.abort()
        print("\naborted", file=sys.stderr)
        return 130
    finally:
        agent.close()
    return 0 if reason == "done" else 1


def usage_summary(usage: list[ev.Usage]) -> str:
    """The turn's tokens (how many of them the provider read from its cache) and the session's cost."""
    cost = usage[-1].cost
    return (f"tokens: {sum(u.input_tokens for u in usage):,} in ({sum(u.cached_tokens for u in usage):,} cached), "
            f"{sum(u.output_tokens for u in usage):,} out" + ("" if cost is None else f", session ${cost:.4f}"))


def _print(rendered: Rendered) -> None:
    """The answer on stdout, the activity (tools, approvals, errors) on stderr."""
    if rendered.answer:
        sys.stdout.write(rendered.answer)
        sys.stdout.flush()
    if rendered.activity:
        sys.stderr.write(rendered.activity)
        sys.stderr.flush()

