"""DSEval in ``nbagent eval``: each problem set a task, each question a turn, each question's validator its check.

DSEval (https://github.com/MetaCopilot/dseval, MIT; "Benchmarking Data Science Agents", Zhang et al.,
ACL 2024) is a series of problem sets: questions asked in order of one data-analysis session, each
judged by a validator on the result and on what the code did to the namespace. Here a problem set
is one task: its data in ``inputs/``, a notebook ``<set>.ipynb`` that starts with the set's given
code, and one prompt per question in one session; the agent answers question N in code cells
marked ``# QN``. The check (``dseval_check``) runs the set in one kernel as DSEval does and judges
every question; each question is a row of the results.

The data is the benchmark folder of a pinned commit of DSEval's repository (its git tree checked),
downloaded once into the cache, or a local copy given with ``data=`` (``--data``).
"""

from __future__ import annotations

import fnmatch
import shutil
from pathlib import Path

from ...errors import ConfigError
from .dseval_format import Benchmark, ProblemSet, Section, load_benchmark
from .fetch import cache_root, fetch_tree, git_tree_id, link_or_copy
from .run import BenchmarkInfo
from .run import PlannedTask

COMMIT = "d813031dd8693023e9b9081bf4d74d0d9394a6ee"
"""DSEval's commit whose ``benchmarks/`` folder is the pinned release (April 2024)."""
TREE = "9446dcb0dea614f065b4340fac20ce1147db5dd3"
"""The git tree id of ``benchmarks/`` at COMMIT: what a download is checked against."""
ARCHIVE_URL = "https://github.com/MetaCopilot/dseval/archive/{commit}.tar.gz"
BENCHMARKS = ("exercise", "so", "leetcode", "kaggle")
CHECKER = "nbagent.evals.public.dseval_check"

FIRST = """This is a data-analysis session in the notebook {notebook} (its data is in inputs/). I will ask
{count} questions, one at a time; answer each in the notebook, after the cells already there.

Answer question N in new code cells at the end of {notebook}, the first of them starting with the
line `# QN`. The answer's last line is an expression whose value is the answer (as a notebook shows
it), unless the question asks only to change variables; use the names the question gives. The code
runs after the cells before it, in the same kernel, as a notebook does.

{question}"""
NEXT = "{given}{question}"
GIVEN = ("First add this given code as its own cell at the end of the notebook, as it is, with the line "
         "`# given` above it:\n```python\n{code}\n```\n\n")


def locate(data: str | Path | None = None, benchmark: str = "exercise", *, url: str | None = None,
           tree: str = TREE) -> tuple[Path, str]:
    """The benchmark's folder and where it came from: ``data`` (a DSEval checkout, its benchmarks/
    folder, or one benchmark's folder), else the pinned release (downloaded once, its tree checked)."""
    if data is not None:
        root = Path(data).expanduser().resolve()
        for folder in (root, root / benchmark, root / "benchmarks" / benchmark):
            if (folder / "_manifest.yaml").is_file():
                return folder, f"local copy {folder} (git tree {git_tree_id(folder)[:12]})"
        raise ConfigError(f"{root} holds no DSEval benchmark {benchmark!r} (a folder with _manifest.yaml)")
    if benchmark not in BENCHMARKS:
        raise ConfigError(f"DSEval has no benchmark {benchmark!r}: one of {', '.join(BENCHMARKS)}")
    dest = cache_root() / f"dseval-{COMMIT[:12]}" / "benchmarks"
    fetch_tree(url or ARCHIVE_URL.format(commit=COMMIT), dest, "benchmarks", tree)
    return dest / benchmark, f"DSEval {COMMIT[:12]} (pinned release, tree {tree[:12]} checked)"


def plan(bench: Benchmark, where: Path, pattern: str | None = None) -> list[PlannedTask]:
    """One task per problem set (those whose name matches ``pattern``), its workspace made in ``where``."""
    chosen = [s for s in bench.sets if _matches(s.name, pattern)]
    if not chosen:
        raise ConfigError(f"no problem set of DSEval {bench.name} matches {pattern!r}")
    return [plan_set(s, where / s.name) for s in chosen]


def _matches(name: str, pattern: str | None) -> bool:
    globs = [g.strip() for g in (pattern or "*").split(",") if g.strip()]
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def plan_set(problems: ProblemSet, dest: Path) -> PlannedTask:
    notebook = f"{problems.name}.ipynb"
    workspace = dest / "workspace"
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    if problems.inputs is not None:
        for source in problems.inputs.rglob("*"):
            if source.is_file():
                link_or_copy(source, workspace / "inputs" / source.relative_to(problems.inputs))
    given = _leading_context(problems.sections)
    write_notebook(workspace / notebook, problems.name, given)
    return PlannedTask(name=problems.name, workspace=workspace, prompts=tuple(prompts(problems, notebook)),
                       checker=(CHECKER, str(problems.path), notebook),
                       parts=tuple(f"q{n}" for n in range(1, len(problems.questions) + 1)), tags=("dseval",),
                       reads=(Path(problems.path).resolve().parent,))


def _leading_context(sections: tuple[Section, ...]) -> list[str]:
    given = []
    for section in sections:
        if section.is_question:
            break
        given.append(section.code)
    return given


def prompts(problems: ProblemSet, notebook: str) -> list[str]:
    """One prompt per question; context code between questions is handed over with the next one."""
    out: list[str] = []
    pending: list[str] = []
    seen_question = False
    for section in problems.sections:
        if not section.is_question:
            if seen_question:
                pending.append(section.code)
            continue
        seen_question = True
        number = len(out) + 1
        question = f"Question {number} (# Q{number}):\n{str(section.question).strip()}"
        if number == 1:
            out.append(FIRST.format(notebook=notebook, count=len(problems.questions), question=question))
        else:
            given = "".join(GIVEN.format(code=code) for code in pending)
            out.append(NEXT.format(given=given, question=question))
        pending = []
    return out


def write_notebook(path: Path, title: str, given: list[str]) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nA DSEval problem set: the given code first, "
                                              "then an answer per question.", id="title")]
    nb.cells += [nbformat.v4.new_code_cell(code, id=f"given-{i}") for i, code in enumerate(given)]
    nbformat.write(nb, str(path))


def describe(bench: Benchmark, data: str) -> BenchmarkInfo:
    return BenchmarkInfo(key="dseval", name=f"DSEval {bench.name}", version=bench.version,
                        split=f"{bench.name} v{bench.version}", digest=git_tree_id(bench.folder)[:12], data=data)
