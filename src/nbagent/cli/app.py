"""The ``nbagent`` console script: ``nbagent run "..."`` and ``nbagent sessions ...``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .. import events as ev
from ..config import APPROVAL_MODES
from ..errors import ConfigError, MissingSetting, NbagentError
from ..render.terminal import Rendered, TerminalRenderer
from ..tools.terminal_approver import TerminalApprover, ask_on_stderr


HELP_EPILOG = """Offline mode: with no model endpoint configured (OPENAI_API_KEY, OPENAI_BASE_URL or --base-url)
and no model named, nbagent answers with a small offline model (SmolLM2-135M, from jupyter-nbagent[local]):
it shows how nbagent works and says so on stderr, but it is not for real work. See docs/offline.md.
Exit codes: 0 done, 1 failed, 2 usage error, 130 interrupted, 141 the output's reader went away."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return args.handler(args)
    except MissingSetting as exc:
        print(f"nbagent: {exc.worded(_OPTION_OF.get(exc.setting, f'pass {exc.setting}=...'))}", file=sys.stderr)
        return 2
    except ConfigError as exc:  # the command cannot work as given: a usage error
        print(f"nbagent: {exc}", file=sys.stderr)
        return 2
    except NbagentError as exc:
        print(f"nbagent: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _reader_went_away()


_OPTION_OF = {"model": "pass --model NAME"}
"""How the CLI gives a setting a MissingSetting names (the Python API says ``model=...``)."""


def _reader_went_away() -> int:
    """``nbagent ... | head -1``: the reader closed the pipe. Exit quietly, as Unix tools do (128 + SIGPIPE);
    stdout goes to /dev/null so that the interpreter's last flush does not complain either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


class _Parser(argparse.ArgumentParser):
    """A parser whose every level refuses what it does not know, so that ``nbagent run --bogus`` prints
    the usage of ``run`` (argparse leaves a sub-command's leftovers to the top level's usage)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


class _Version(argparse.Action):
    """``--version``: read from the installed distribution only when asked (it costs a metadata read)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import nbagent
        from ..workspace.sandbox import current

        print(f"nbagent {nbagent.__version__} ({nbagent.DISTRIBUTION})")
        print(f"sandbox: {current().describe()}")  # what confines the code nbagent starts, or that nothing does
        parser.exit()


def _workspace(value: str) -> str:
    """``--workspace``, checked once for every command: one message for one mistake."""
    if not os.path.isdir(value):
        raise argparse.ArgumentTypeError(f"workspace {value} is not a directory")
    return value


def _parser() -> argparse.ArgumentParser:
    # Options every command takes, accepted before and after the command (``nbagent sessions list -w X``).
    # SUPPRESS: a default given at one level would overwrite a value given at another.
    shared = _Parser(add_help=False)
    shared.add_argument("--workspace", "-w", default=argparse.SUPPRESS, type=_workspace,
                        help="workspace root (default: the current directory)")
    parser = _Parser(prog="nbagent", description="An AI coding agent for Jupyter workspaces.", parents=[shared],
                     epilog=HELP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, help="print nbagent's version and exit")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run one prompt on a workspace and stream the answer", parents=[shared],
                         epilog=HELP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("prompt", help="what to do (use - to read it from standard input)")
    run.add_argument("--model", "-m", help="model name (env NBAGENT_MODEL)")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    run.add_argument("--api", choices=["chat", "responses"], help="wire protocol (env NBAGENT_API)")
    run.add_argument("--yes", "-y", action="store_true", help="approve every tool call (approval auto)")
    run.add_argument("--approval", choices=APPROVAL_MODES,
                     help="approval mode (default: sandboxed where the sandbox works, else ask)")
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
    from .check import add_check_parser

    add_check_parser(sub, parents=[shared])
    from .sandbox import add_sandbox_parser

    add_sandbox_parser(sub, parents=[shared])
    from .knowledge import add_knowledge_parsers

    add_knowledge_parsers(sub, parents=[shared])
    from .batch import add_batch_parser

    add_batch_parser(sub, parents=[shared])
    from .eval import add_eval_parser

    add_eval_parser(sub, parents=[shared])
    from .acp import add_acp_parser

    add_acp_parser(sub, parents=[shared])
    return parser


def _run(args: argparse.Namespace) -> int:
    from ..engine.agent import Agent
    from ..tools.approvals import mode_line

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    approval = "auto" if args.yes else args.approval
    session = "continue" if args.cont else args.session
    agent = Agent(workspace=getattr(args, "workspace", None), model=args.model, base_url=args.base_url,
                  api=args.api, approval=approval, toolsets=args.toolsets, max_steps=args.max_steps,
                  session=session, memory=False if args.no_memory else None)
    markdown = args.markdown == "always" or (args.markdown == "auto" and sys.stdout.isatty())
    # Like every front end, the terminal starts from the agent's state and applies the turn's events.
    state = agent.snapshot()
    renderer = TerminalRenderer(markdown=markdown, quiet=args.quiet, state=state)
    # The question goes to stderr and the answer is read from stdin, when stdin is a terminal.
    approver = TerminalApprover(ask_on_stderr if sys.stdin.isatty() else None,
                                unattended="run with --yes (or --approval auto)")
    reason = "error"
    usage: list[ev.Usage] = []
    try:
        if state.settings.get("offline"):
            print(offline_notice(state.settings.get("model") or "the offline model"), file=sys.stderr)
        if not args.quiet:
            print(f"nbagent: {mode_line(agent.config.approval)}", file=sys.stderr)
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


def offline_notice(model: str) -> str:
    """The one line that says the offline model is answering, what it is for and how to leave it."""
    return (f"nbagent: offline mode: {model}, a tiny model on this machine, answers; it shows how nbagent "
            f"works and may invent what is in your files. For real work: --model NAME with OPENAI_API_KEY, "
            f"or --base-url URL (docs/offline.md)")


def usage_summary(usage: list[ev.Usage]) -> str:
    """The turn's tokens (how many of them the provider read from its cache) and the session's cost."""
    cost, images = usage[-1].cost, sum(u.image_tokens for u in usage)
    return (f"tokens: {sum(u.input_tokens for u in usage):,} in ({sum(u.cached_tokens for u in usage):,} cached"
            + (f", ~{images:,} images" if images else "") + f"), {sum(u.output_tokens for u in usage):,} out"
            + ("" if cost is None else f", session ${cost:.4f}"))


def _print(rendered: Rendered) -> None:
    """The answer on stdout, the activity (tools, approvals, errors) on stderr."""
    if rendered.answer:
        sys.stdout.write(rendered.answer)
        sys.stdout.flush()
    if rendered.activity:
        sys.stderr.write(rendered.activity)
        sys.stderr.flush()

