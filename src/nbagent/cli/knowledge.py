"""``nbagent memory status|list|search|remove|reindex`` (``forget``: the old name of remove) and ``nbagent stats``: knowledge on the command line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from ..render.escape import escape_controls, truncate



def add_knowledge_parsers(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> None:
    memory = subparsers.add_parser("memory", help="project memory: status, list, search, remove, reindex",
                                   parents=parents)
    commands = memory.add_subparsers(dest="memory_command", metavar="COMMAND", required=True)
    scope = argparse.ArgumentParser(add_help=False)
    scope.add_argument("--scope", choices=["workspace", "global", "all"], default=None,
                       help="which memory (default: the memory_scope setting, normally workspace)")
    p = commands.add_parser("status", help="rows, database and WAL sizes, models, hit rate",
                            parents=[*parents, scope])
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=_status)
    p = commands.add_parser("list", help="the entries, newest first", parents=[*parents, scope])
    p.add_argument("--category", choices=["fact", "decision", "preference", "snippet", "summary"])
    p.add_argument("-n", "--limit", type=int, default=None)
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.set_defaults(handler=_list)
    p = commands.add_parser("search", help="the best entries for a query, with score and why",
                            parents=[*parents, scope])
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--mode", choices=["hybrid", "keyword", "cosine"], default="hybrid")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.set_defaults(handler=_search)
    for name, listed in (("remove", True), ("forget", False)):  # forget: the old name, unlisted
        p = commands.add_parser(name, parents=[*parents, scope],
                                **({"help": "remove an entry by id, or every entry containing a text"} if listed else {}))
        p.add_argument("what", help="an id from `nbagent memory list`, or text")
        p.set_defaults(handler=_remove)
    p = commands.add_parser("reindex", help="re-embed every entry with the configured embedding model",
                            parents=[*parents, scope])
    p.set_defaults(handler=_reindex)

    stats = subparsers.add_parser("stats", help="local telemetry: turns, tokens, cost, deny and failure rates",
                                  parents=parents)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(handler=_stats)


def _open(args: argparse.Namespace):
    from ..memory.handle import MemoryHandle

    return MemoryHandle.open(getattr(args, "workspace", None) or ".", scope=args.scope)


def _status(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        status = memory.status()
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    for scope in status["scopes"]:
        models = ", ".join(f"{m['model']} ({m['dim'] or '-'} dims): {m['rows']}" for m in scope["models"]) or "-"
        rate = "-" if scope["hit_rate"] is None else f"{scope['hit_rate']:.0%} of {scope['searches']} searches"
        print(f"{scope['source']} memory: {_clean(scope['path'])}\n"
              f"  rows {scope['rows']} (embedded {scope['embedded']}), injections {scope['injections']}\n"
              f"  database {scope['db_bytes']:,} bytes, WAL {scope['wal_bytes']:,} bytes\n"
              f"  models: {_clean(models)}; current: {_clean(str(scope['current_model'] or 'none (keyword only)'))}\n"
              f"  full-text index: {'FTS5' if scope['fts5'] else 'none (LIKE search)'}; hit rate: {rate}")
        for warning in scope.get("warnings", []):
            print(f"  warning: {_clean(warning)}")
    return 0


def _print_json(frame) -> int:
    """``--json``: one JSON object per line, every column (what scripts read)."""
    for record in frame.to_dict(orient="records"):
        print(json.dumps(record, default=str))
    return 0


def _list(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        frame = memory.list(category=args.category, limit=args.limit)
    if args.json:
        return _print_json(frame)
    if frame.empty:
        print("no memory entries")
    for row in frame.to_dict(orient="records"):
        tags = f" [{row['tags']}]" if row["tags"] else ""
        print(f"{row['id']:>5}  {row['source']:<9} {_clean(row['category']):<10} {_clean(truncate(str(row['text']), 90, one_line=True))}"
              f"{_clean(tags)}")
    return 0


def _search(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        frame = memory.search(args.query, args.k, mode=args.mode)
    if args.json:
        return _print_json(frame)
    if frame.empty:
        print("nothing found")
    for row in frame.to_dict(orient="records"):
        print(f"{row['id']:>5}  {row['score']:5.2f}  {_clean(row['category']):<10} {_clean(truncate(str(row['text']), 90, one_line=True))}\n"
              f"       {_clean(row['why'])} ({row['source']})")
    return 0


def _remove(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        removed = memory.forget(args.what)
    if removed.empty:
        print(f"nothing matched {_clean(args.what)!r}; nothing removed", file=sys.stderr)
        return 1
    for row in removed.to_dict(orient="records"):
        print(f"removed {row['id']}: {_clean(truncate(str(row['text']), 90, one_line=True))}")
    return 0


def _reindex(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        try:
            count = memory.reindex()
        except ValueError as exc:
            print(f"nbagent: {exc}", file=sys.stderr)
            return 2
    print(f"re-embedded {count} entries")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from ..knowledge.stats import completion_summary, per_tool, read_completions, summary
    from ..render.text import cost_text
    from ..knowledge.telemetry import read_traces

    workspace = getattr(args, "workspace", None) or "."
    records = read_traces(workspace)
    totals, tools = summary(records), per_tool(records)
    completions = completion_summary(read_completions(workspace))
    if args.json:
        print(json.dumps({"summary": totals, "tools": tools, "completions": completions}, indent=2))
        return 0
    cost = cost_text(totals["cost"])
    duration = "-" if totals["mean_duration_s"] is None else f"{totals['mean_duration_s']:.1f} s"
    deny = "-" if totals["deny_rate"] is None else f"{totals['deny_rate']:.0%}"
    print(f"turns {totals['turns']}, tokens {totals['input_tokens']:,} in ({totals['cached_tokens']:,} cached) / "
          f"{totals['output_tokens']:,} out, "
          f"cost {cost}, mean duration {duration}, tool calls {totals['tool_calls']}, denied {deny}")
    if completions["requests"]:
        print(f"inline completions {completions['requests']} ({completions['cancelled']} cancelled), tokens "
              f"{completions['input_tokens']:,} in / {completions['output_tokens']:,} out, "
              f"cost {cost_text(completions['cost'])}")
    if tools:
        print(f"{'tool':<22}{'calls':>7}{'failed':>8}{'denied':>8}{'deny rate':>11}{'mean ms':>10}")
    for row in tools:
        print(f"{_clean(row['tool'])[:21]:<22}{row['calls']:>7}{row['failed']:>8}{row['denied']:>8}"
              f"{row['deny_rate']:>11.0%}{row['mean_ms']:>10.1f}")
    return 0


def _clean(text: Any) -> str:
    """Memory text and trace names are the model's: no escape sequence or bidi override reaches the terminal."""
    return escape_controls(str(text), keep_newlines=False)
