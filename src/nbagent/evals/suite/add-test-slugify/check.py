from pathlib import Path

from nbagent.evals.checks import failed_tests


def run_tests(module_source):
    return failed_tests("text", module_source, "test_text.py")


def test_the_tests_pass_on_the_module():
    assert Path("test_text.py").is_file(), "there is no test_text.py"
    assert run_tests(Path("text.py").read_text()) == []


def test_the_tests_catch_a_bug():
    source = Path("text.py").read_text()
    mutant = source.replace('title.lower()', 'title')
    assert mutant != source, "text.py was changed: the check cannot plant its bug"
    assert run_tests(mutant), "the tests pass even when text.py is broken (it no longer lowercases)"
