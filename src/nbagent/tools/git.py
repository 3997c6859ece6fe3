"""Read-only git: status, diff, log, show and blame, without ever going through a shell.

GitPython finds the repository (the workspace or a directory above it) and
runs git with a fixed argv, which is what makes these tools safe to run
without asking: no argument can become a second command. What remains is
git's own options, so a ref may not start with "-" (``--output=<file>``
would write) and paths always come after ``--``.

A repository is hostile input too: its ``.git/config`` and ``.gitattributes``
can name commands (textconv and filter drivers, external diff programs, a
pager, gpg, fsmonitor, hooks) that git would run while "only reading". Every
call neutralises each of them (``git_safety`` reads the configured drivers and
blanks them with ``-c``), and the repository-wide patches and blobs a ref can
name are limited to the workspace's own paths. Files its configuration names
(includes, attributes, mailmap, ignore-revs) are read only inside the
repository (nbagent.workspace.git_config), and every call has a time limit.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

# Without a git executable GitPython refuses to be imported at all, which would stop the agent from
# starting; imported quietly, only the git tools fail, with the message below.
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
import git  # noqa: E402

from ..errors import ToolError
from ..workspace.git_config import GIT_TIMEOUT, config_guard, locate
from .base import ToolSet, function_tool
from .context import ToolContext


READ_ONLY_OPTIONS = [
    "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "color.ui=false",
    "-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false",
    "-c", "core.pager=cat", "-c", "diff.submodule=short", "-c", "status.submoduleSummary=false",
]
SAFE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat", "PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0"}
"""The system config is not the user's either; the rest of the variables keep programs out of reach."""
_DRIVER_KEY = re.compile(r"^(?:filter\.(.+)\.(clean|smudge|process|required)|diff\.(.+)\.(textconv|command))$",
                         re.IGNORECASE | re.DOTALL)
LOG_DEFAULT, LOG_MAX = 20, 200


class _Repo:
    """The repository holding the workspace, and the workspace's place in it."""

    def __init__(self, ctx: ToolContext):
        self.ctx = ctx
        root = ctx.workspace.root
        if not shutil.which(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git"):
            raise ToolError("git is not installed here (no `git` on PATH): the git tools need it; "
                            "install git, or switch the git tool set off")
        located = locate(root)
        # Checked before GitPython opens the repository: reading its config follows includes.
        guard = config_guard([located.git_dir, located.common_dir], located.top) if located else None
        try:
            self.repo = git.Repo(root, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise ToolError(
                f"the workspace {root} is not inside a git repository, so the git tools have nothing to read "
                "(`git init` in bash would create one)"
            ) from None
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise ToolError(f"the repository at {self.repo.git_dir} is bare: it has no working tree to read")
        self.top = Path(self.repo.working_tree_dir).resolve()
        if guard is None:  # GitPython found what our walk did not (GIT_DIR in the environment)
            guard = config_guard([Path(self.repo.git_dir), Path(self.repo.common_dir)], self.top)
        self.guard = guard
        safe = READ_ONLY_OPTIONS + self.guard.options
        self.options = safe + self._blank_drivers(safe)

    def _blank_drivers(self, safe: list[str]) -> list[str]:
        """``-c`` options that switch off every filter and diff driver the configuration defines.

        Listing the configuration runs nothing; a driver whose name git's ``-c``
        cannot spell (an "=" in it) makes every git tool refuse the repository.
        """
        listed = self._git(["config", "--list", "--null", "--name-only"], safe)
        options: list[str] = []
        for key in filter(None, listed.split("\0")):
            if not _DRIVER_KEY.match(key):
                continue
            if "=" in key:
                raise ToolError(f"the repository's config defines a driver git cannot switch off ({key!r}): "
                                "the git tools refuse this repository")
            options += ["-c", f"{key}=false" if key.lower().endswith(".required") else f"{key}="]
        return options

    def __enter__(self) -> "_Repo":
        return self

    def __exit__(self, *exc) -> None:
        self.repo.close()

    def path(self, path: str) -> str:
        """A workspace path (confined to the workspace) as a path relative to the repository's top."""
        real = self.ctx.workspace.resolve(path)
        try:
            return real.relative_to(self.top).as_posix() or "."
        except ValueError:
            raise ToolError(f"{path} is not inside the repository at {self.top}") from None

    def scope(self, path: str | None) -> list[str]:
        """The pathspec after ``--``: the given path, else the workspace when it is only part of the repo."""
        if path:
            return ["--", self.path(path)]
        return [] if self.ctx.workspace.root == self.top else ["--", self.path(".")]

    def commit(self, ref: str) -> str:
        """The commit id ``ref`` names; blobs, trees and ``rev:path`` forms are refused.

        A blob or tree id, or ``HEAD:../file``, would show content from anywhere in
        the repository, outside a workspace that is only part of it.
        """
        ref = _ref(ref)
        if ":" in ref:
            raise ToolError(f"{ref!r}: a ref may not name a file with ':'; give the file as path instead")
        try:
            return self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
        except ToolError:
            raise ToolError(f"{ref!r} is not a commit (a branch, tag, hash or HEAD~n) in this repository") from None

    def commits(self, ref: str) -> str:
        """A commit or a range ``a..b`` / ``a...b``, each end checked by ``commit``."""
        ref = _ref(ref)
        for dots in ("...", ".."):
            if dots in ref:
                left, right = ref.split(dots, 1)
                return dots.join(self.commit(side) if side else "" for side in (left, right))
        return self.commit(ref)

    def run(self, *args: str) -> str:
        return self._git(list(args), getattr(self, "options", READ_ONLY_OPTIONS))

    def _git(self, args: list[str], options: list[str]) -> str:
        status, out, err = self.repo.git.execute(
            ["git", *options, *args], with_extended_output=True, with_exceptions=False,
            stdout_as_string=False, strip_newline_in_stdout=False, env=SAFE_ENV, kill_after_timeout=GIT_TIMEOUT,
        )
        if status != 0:
            message = err.decode("utf-8", "replace") if isinstance(err, bytes) else str(err)
            raise ToolError(f"git {args[0]} failed: {message.strip() or f'exit status {status}'}")
        return out.decode("utf-8", errors="replace") if isinstance(out, bytes) else str(out)


def _ref(ref: str) -> str:
    ref = ref.strip()
    if not ref:
        raise ToolError("ref is empty; give a commit, branch, tag or range such as HEAD~2 or main..HEAD")
    if ref.startswith("-"):
        raise ToolError(f"{ref!r} is not a ref: refs may not start with '-' (git would read an option)")
    return ref


def git_status(ctx: ToolContext) -> str:
    """Show the branch and the changed, staged and untracked files."""
    with _Repo(ctx) as repo:
        out = repo.run("status", "--short", "--branch", "--untracked-files=normal", "--ignore-submodules=all",
                       *repo.scope(None))
    lines = out.rstrip("\n").splitlines()
    if len(lines) <= 1:
        lines.append("nothing to commit, working tree clean")
    return "\n".join(lines)


def git_diff(ctx: ToolContext, ref: str | None = None, staged: bool = False, path: str | None = None) -> str:
    """Show changes as a unified diff: by default the unstaged changes in the working tree.

    Args:
        ref: Compare against this commit or range instead (e.g. HEAD~1, main..HEAD).
        staged: Show the staged changes (the index) instead.
        path: Limit the diff to this file or directory.
    """
    args = ["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--stat", "--patch"]
    if staged:
        args.append("--cached")
    with _Repo(ctx) as repo:
        if ref:
            args.append(repo.commits(ref))
        out = repo.run(*args, *repo.scope(path))
    return out.rstrip("\n") or "no differences"


def git_log(ctx: ToolContext, max_count: int | None = None, path: str | None = None) -> str:
    """List recent commits, newest first: short hash, date, author, refs and subject.

    Args:
        max_count: How many commits (default 20, at most 200).
        path: Only commits that touched this file or directory.
    """
    count = LOG_DEFAULT if max_count is None else min(max(int(max_count), 1), LOG_MAX)
    with _Repo(ctx) as repo:
        if not repo.repo.head.is_valid():
            return "no commits yet"
        out = repo.run("log", f"--max-count={count}", "--date=short", "--format=%h %ad %an%d %s",
                       *repo.scope(path))
    return out.rstrip("\n") or "no commits match"


def git_show(ctx: ToolContext, ref: str, path: str | None = None) -> str:
    """Show a commit (message, changed files and patch), or with path, that file's content at the ref.

    Args:
        ref: A commit, branch or tag (e.g. HEAD~3, v1.2).
        path: A file: show its content as it was at ref instead of the commit.
    """
    with _Repo(ctx) as repo:
        commit = repo.commit(ref)
        if path:
            return repo.run("show", "--no-ext-diff", "--no-textconv", f"{commit}:{repo.path(path)}")
        return repo.run("show", "--no-ext-diff", "--no-textconv", "--stat", "--patch", "--format=fuller", commit,
                        *(repo.scope(None) or ["--"])).rstrip("\n")


def git_blame(ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """Show who last changed each line of a file, and in which commit.

    Args:
        path: The file.
        start_line: First line to show (1-based; default 1).
        end_line: Last line to show (default: the end of the file).
    """
    args = ["blame", "--no-textconv", "--date=short"]
    if start_line is not None or end_line is not None:
        start, end = start_line or 1, end_line
        if start < 1 or (end is not None and end < start):
            raise ToolError("lines are 1-based and end_line must not be before start_line")
        args.append(f"-L{start},{end if end is not None else ''}")
    with _Repo(ctx) as repo:
        repo.guard.check("blame.ignorerevsfile")
        return repo.run(*args, "--", repo.path(path)).rstrip("\n")


GIT = ToolSet(
    "git",
    [
        function_tool(git_status, read_only=True),
        function_tool(git_diff, read_only=True),
        function_tool(git_log, read_only=True),
        function_tool(git_show, read_only=True),
        function_tool(git_blame, read_only=True),
    ],
    description="Read-only git: status, diff, log, show, blame (never through a shell).",
)
