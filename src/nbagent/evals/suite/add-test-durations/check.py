from pathlib import Path

from nbagent.evals.checks import failed_tests


def run_tests(module_source):
    return failed_tests("durations", module_source, "test_durations.py")


def test_the_tests_pass_on_the_module():
    assert Path("test_durations.py").is_file(), "there is no test_durations.py"
    assert run_tests(Path("durations.py").read_text()) == []


def test_the_tests_catch_a_bug():
    source = Path("durations.py").read_text()
    mutant = source.replace('* 60', '* 100')
    assert mutant != source, "durations.py was changed: the check cannot plant its bug"
    assert run_tests(mutant), "the tests pass even when durations.py is broken (hours count 100 minutes)"
