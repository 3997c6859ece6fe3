from pathlib import Path

from nbagent.evals.checks import failed_tests


def run_tests(module_source):
    return failed_tests("smooth", module_source, "test_smooth.py")


def test_the_tests_pass_on_the_module():
    assert Path("test_smooth.py").is_file(), "there is no test_smooth.py"
    assert run_tests(Path("smooth.py").read_text()) == []


def test_the_tests_catch_a_bug():
    source = Path("smooth.py").read_text()
    mutant = source.replace('len(values) - window + 1', 'len(values) - window')
    assert mutant != source, "smooth.py was changed: the check cannot plant its bug"
    assert run_tests(mutant), "the tests pass even when smooth.py is broken (it drops the last window)"
