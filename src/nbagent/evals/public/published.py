"""Published figures a public benchmark's pass rate can be placed beside, and whether a run compares like for like.

Each figure names the benchmark, the split it was measured on, who measured what, when, and where it
was published. ``beside(benchmark, run)`` says for each whether this run is like for like with it:
the same split, all of it, scored by the same rule; and why not when it is not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    benchmark: str
    split: str
    """What was measured, as the run's own ``split`` names it (a DSEval benchmark, a DABStep split)."""
    questions: int
    pass_rate: float
    who: str
    date: str
    source: str
    note: str = ""


_DSEVAL_RESULTS = "https://github.com/MetaCopilot/dseval/blob/d813031dd8693023e9b9081bf4d74d0d9394a6ee/results/"
FIGURES: dict[str, tuple[Figure, ...]] = {
    "dseval": tuple(
        Figure("DSEval", split, n, rate, "CoML agent with gpt-35-turbo (Azure OpenAI), one attempt per question",
               "2024-02-26", f"{_DSEVAL_RESULTS}{folder}/240226-coml-gpt-35-turbo-aoai.jsonl",
               "share of questions with the verdict CORRECT in the benchmark's results file")
        for split, folder, n, rate in (("Exercise v1", "Exercise", 187, 148 / 187), ("SO v1", "SO", 202, 154 / 202),
                                       ("LeetCode v1", "LeetCode", 40, 18 / 40), ("Kaggle v1", "Kaggle", 396, 240 / 396))),
    "dabstep": (
        Figure("DABStep", "default: hard questions", 0, 0.1455, "the best agent the benchmark's authors evaluated",
               "2025-06", "DABstep: Data Agent Benchmark for Multi-step Reasoning (Egg et al., arXiv, 2025); "
               "leaderboard: https://huggingface.co/spaces/adyen/DABstep",
               "the 450-question default split, scored by the leaderboard; its answers are not public"),
    ),
}


def beside(benchmark: str, split: str, questions_run: int) -> list[dict[str, Any]]:
    """The published figures for ``benchmark``, each with ``like_for_like`` and ``why_not``."""
    rows = []
    for figure in FIGURES.get(benchmark, ()):
        reasons = []
        if figure.split != split:
            reasons.append(f"it was measured on {figure.split}, this run on {split}")
        elif figure.questions and questions_run != figure.questions:
            reasons.append(f"this run asked {questions_run} of its {figure.questions} questions")
        rows.append({**asdict(figure), "like_for_like": not reasons, "why_not": "; ".join(reasons)})
    return rows
