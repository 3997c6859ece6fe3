import importlib.util
import sys
from pathlib import Path


def run_tests(module_source):
    """Run test_durations.py's tests against ``module_source``; the names of those that failed."""
    spec = importlib.util.spec_from_loader("durations", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(module_source, "durations.py", "exec"), module.__dict__)
    sys.modules["durations"] = module
    tests_spec = importlib.util.spec_from_file_location("the_tests", "test_durations.py")
    tests = importlib.util.module_from_spec(tests_spec)
    tests_spec.loader.exec_module(tests)
    functions = [f for name, f in vars(tests).items() if name.startswith("test") and callable(f)]
    assert functions, "test_durations.py has no test functions"
    failed = []
    for f in functions:
        try:
            f()
        except Exception:
            failed.append(f.__name__)
    return failed


def test_the_tests_pass_on_the_module():
    assert Path("test_durations.py").is_file(), "there is no test_durations.py"
    assert run_tests(Path("durations.py").read_text()) == []


def test_the_tests_catch_a_bug():
    source = Path("durations.py").read_text()
    mutant = source.replace('* 60', '* 100')
    assert mutant != source, "durations.py was changed: the check cannot plant its bug"
    assert run_tests(mutant), "the tests pass even when durations.py is broken (hours count 100 minutes)"
