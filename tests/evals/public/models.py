"""Scripted models that play the public benchmarks' tasks: the reference answers, or wrong ones."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from nbagent.testing import Call, Reply

HERE = Path(__file__).parent
DSEVAL = HERE / "dseval"
DABSTEP = HERE / "dabstep"

APPEND_CELL = ("import nbformat, sys; path, source = sys.argv[1], sys.argv[2]; nb = nbformat.read(path, 4); "
               "nb.cells.append(nbformat.v4.new_code_cell(source)); nbformat.write(nb, path)")


def _user_prompts(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def dseval_model(body: dict):
    """Answers each question with DSEval's reference code, appended as a '# QN' cell with a shell
    command; model "dseval-half" answers the even questions wrongly (with 42)."""
    from nbagent.evals.public.dseval_format import read_problem_set

    if body["messages"][-1]["role"] != "user":
        return Reply(text="Answered in the notebook.")
    prompts = _user_prompts(body)
    notebook = re.search(r"in the notebook (\S+\.ipynb)", prompts[0]).group(1)
    number = int(re.search(r"Question (\d+) \(# Q", prompts[-1]).group(1))
    problems = read_problem_set(DSEVAL / "exercise" / notebook.replace(".ipynb", ".py"))
    code = problems.questions[number - 1].code
    if body["model"] == "dseval-half" and number % 2 == 0:
        code = "42"
    cell = f"# Q{number}\n" + code
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(APPEND_CELL)} {notebook} {shlex.quote(cell)}"
    return Reply(tool_calls=[Call("bash", {"command": command})])


DABSTEP_CODE = {
    "How many total transactions": "import pandas as pd\ndf = pd.read_csv('data/payments.csv')\nprint(len(df))",
    "Which issuing country": ("import pandas as pd\ndf = pd.read_csv('data/payments.csv')\n"
                              "print(df.groupby('issuing_country').size().idxmax())"),
    "What percentage of the total volume": (
        "import pandas as pd\ndf = pd.read_csv('data/payments.csv')\n"
        "share = df.loc[df.has_fraudulent_dispute, 'eur_amount'].sum() / df.eur_amount.sum() * 100\n"
        "print(round(share, 6))"),
}
DABSTEP_WRONG = {
    "How many total transactions": "print(59)",
    "Which issuing country": "print('ES')",
    "What percentage of the total volume": "print(undefined_share)",  # does not re-run clean
}


def dabstep_model(body: dict):
    """Writes answer.ipynb with a notebook tool: code that computes the answer ("dabstep-ref"), or a
    wrong answer, or a cell that fails ("dabstep-wrong")."""
    if body["messages"][-1]["role"] != "user":
        return Reply(text="The notebook prints the answer.")
    prompt = _user_prompts(body)[-1]
    table = DABSTEP_CODE if body["model"] == "dabstep-ref" else DABSTEP_WRONG
    source = next(code for words, code in table.items() if words in prompt)
    return Reply(tool_calls=[Call("notebook_insert", {"path": "answer.ipynb", "cell_type": "code", "source": source})])
