"""DSEval's validators, as the check runs them: one namespace per set advanced by the reference code,
each question judged on a copy of it; the subset's references pass and wrong answers fail."""

from __future__ import annotations

import shutil

import nbformat
import pytest

from nbagent.evals.public import dseval_check as dc
from nbagent.evals.public.dseval_format import load_benchmark, read_problem_set
from nbagent.evals.runner import run_check

from .models import DSEVAL

SET = DSEVAL / "exercise" / "03-grouping-alcohol-consumption.py"


@pytest.fixture
def in_workspace(tmp_path, monkeypatch):
    shutil.copytree(DSEVAL / "exercise" / "_inputs", tmp_path / "inputs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_subset_reads_as_dseval_reads_it():
    bench = load_benchmark(DSEVAL / "exercise")
    assert (bench.name, bench.version) == ("Exercise", "1")
    assert [len(s.questions) for s in bench.sets] == [6, 6]
    first = bench.sets[1].questions[0]
    assert first.validator == {"namespace_check": {"drinks": None}}
    assert first.code == "drinks = pd.read_csv('inputs/drinks.csv')"
    assert bench.sets[1].sections[0].code == "import pandas as pd"  # the given code, no question


def test_reference_answers_pass_every_validator(in_workspace):
    for problems in load_benchmark(DSEVAL / "exercise").sets:
        parts = dc.check_set(problems, {i + 1: q.code for i, q in enumerate(problems.questions)})
        assert [p["passed"] for p in parts] == [True] * 6, parts


def test_wrong_answers_fail_with_the_validators_reason(in_workspace):
    problems = read_problem_set(SET)
    given = {1: "drinks = pd.read_csv('inputs/drinks.csv').head(3)",        # the wrong rows
             2: "drinks.groupby('continent')['beer_servings'].mean().idxmin()",  # the wrong continent
             3: "drinks = None\ndrinks",                                    # spoils a variable it must not touch
             4: "drinks.groupby('continent').mean(numeric_only=True)",       # right
             5: "print(drinks.groupby('continent').median(numeric_only=True))",  # printed, not shown
             6: "1 / 0"}
    parts = {p["name"]: p for p in dc.check_set(problems, given)}
    assert parts["q1"]["reason"].startswith("Variable drinks: DataFrame not equal")
    assert parts["q2"]["reason"].startswith("Expect ") and not parts["q2"]["passed"]
    assert parts["q3"]["reason"] == "Unexpected variable updated: drinks"
    assert parts["q4"]["passed"]  # a wrong answer before never spoils the questions after it
    assert parts["q5"]["reason"].startswith("Output is missing")
    assert parts["q6"]["reason"] == "the answer raised ZeroDivisionError: division by zero"


def test_value_only_and_ignore_order_compare_as_dseval_does(in_workspace):
    problems = read_problem_set(DSEVAL / "exercise" / "01-getting-knowing-your-data-occupation.py")
    right = {i + 1: q.code for i, q in enumerate(problems.questions)}
    given = {**right, 6: "list(users.columns)"}  # value_only: a list of the same names is the same value
    assert all(p["passed"] for p in dc.check_set(problems, given))
    given = {**right, 6: "list(reversed(users.columns))"}
    assert not dc.check_set(problems, given)[5]["passed"]


def test_the_agents_cells_are_found_by_their_markers(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import pandas as pd"), nbformat.v4.new_code_cell("# Q1\nx = 1"),
                nbformat.v4.new_code_cell("x + 1"), nbformat.v4.new_markdown_cell("# Q2 is next"),
                nbformat.v4.new_code_cell("#Q2\nfirst try"), nbformat.v4.new_code_cell("# q2\nsecond try")]
    nbformat.write(nb, str(tmp_path / "set.ipynb"))
    assert dc.answers(tmp_path / "set.ipynb") == {1: "# Q1\nx = 1\n\nx + 1", 2: "# q2\nsecond try"}


@pytest.mark.integration
@pytest.mark.process
def test_the_check_process_reports_each_question(in_workspace):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import pandas as pd"),
                nbformat.v4.new_code_cell("# Q1\ndrinks = pd.read_csv('inputs/drinks.csv')")]
    nbformat.write(nb, str(in_workspace / "set.ipynb"))
    result = run_check(in_workspace, in_workspace, module=("nbagent.evals.public.dseval_check", str(SET), "set.ipynb"),
                       reads=(SET.parent,))  # a checkout under /tmp: the sandbox's /tmp is new
    assert not result["passed"] and [p["passed"] for p in result["check_parts"]] == [True] + [False] * 5
    assert result["check_parts"][1]["reason"] == "no answer: no code cell starts with '# Q2'"


def test_code_given_between_questions_comes_with_the_next_question_and_is_no_answers_part(tmp_path):
    from nbagent.evals.public.dseval_tasks import prompts

    path = tmp_path / "set.py"
    path.write_text('# %%\nimport math\n\n# %%\n"""\nquestion: Show pi.\n"""\n\nmath.pi\n\n'
                    '# %%\nradius = 2\n\n# %%\n"""\nquestion: The area of a circle of that radius.\n"""\n\n'
                    'math.pi * radius ** 2\n')
    problems = read_problem_set(path)
    first, second = prompts(problems, "set.ipynb")
    assert "I will ask\n2 questions" in first and "Question 1 (# Q1):\nShow pi." in first
    assert second.startswith("First add this given code") and "```python\nradius = 2\n```" in second
    assert second.endswith("Question 2 (# Q2):\nThe area of a circle of that radius.")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import math"), nbformat.v4.new_code_cell("# Q1\nmath.pi"),
                nbformat.v4.new_code_cell("# given\nradius = 2"), nbformat.v4.new_code_cell("# Q2\nmath.pi * 4")]
    nbformat.write(nb, str(tmp_path / "set.ipynb"))
    given = dc.answers(tmp_path / "set.ipynb")
    assert given == {1: "# Q1\nmath.pi", 2: "# Q2\nmath.pi * 4"}
    assert [p["passed"] for p in dc.check_set(problems, given)] == [True, True]


TABLE_SET = '''# %%
import numpy as np

# %%
"""
question: |
  Write a function `two_sum(nums, target)` returning the indices of the two numbers adding up to target,
  and sorting nothing in place.

validator:
  template: intact
  table_test:
    function_name: two_sum
    test_cases:
      - [[2, 7, 11, 15], 9]
      - nums: [3, 2, 4]
        target: 6
      - |
        ```
        def _generate():
            nums = [int(x) for x in np.random.permutation(20)]
            return nums, nums[3] + nums[7]
        ```
      - //
      - "`([1, 5, 5], 10)`"
"""

def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], i]
        seen[n] = i
'''


def test_table_tests_call_the_answers_function_on_every_case(tmp_path):
    path = tmp_path / "two-sum.py"
    path.write_text(TABLE_SET)
    problems = read_problem_set(path)
    brute = ("def two_sum(nums, target):\n    return next([i, j] for j in range(len(nums)) for i in range(j)\n"
             "                if nums[i] + nums[j] == target)")
    assert dc.check_set(problems, {1: brute})[0]["passed"]
    first_only = "def two_sum(nums, target):\n    return [0, 1]"
    (part,) = dc.check_set(problems, {1: first_only})
    assert part["reason"].startswith("Function two_sum on test case {'nums': [3, 2, 4], 'target': 6}: Element 0")
    empties = brute.replace("def two_sum", "def _two_sum") + (
        "\ndef two_sum(nums, target):\n    answer = _two_sum(nums, target)\n    nums.clear()\n    return answer")
    reason = dc.check_set(problems, {1: empties})[0]["reason"]  # right answers, but the argument is changed
    assert reason == "Function two_sum on test case ([2, 7, 11, 15], 9): Element 0 not equal: Length mismatch: 4 vs. 0"
    assert dc.check_set(problems, {1: "x = 1"})[0]["reason"] == "Function two_sum not found in submission."


def test_a_planned_question_set_names_its_file_s_folder_for_the_check_s_sandbox(tmp_path):
    """The check reads the question file again; a dataset under /tmp would be hidden by the sandbox's new /tmp."""
    from nbagent.evals.public.dseval_tasks import plan_set

    task = plan_set(read_problem_set(SET), tmp_path / "task")
    assert task.checker[1] == str(SET) and task.reads == (SET.parent.resolve(),)
