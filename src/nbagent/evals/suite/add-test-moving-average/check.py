import importlib.util
import sys
from pathlib import Path


def run_tests(module_source):
    """Run test_smooth.py's tests against ``module_source``; the names of those that failed."""
    spec = importlib.util.spec_from_loader("smooth", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(module_source, "smooth.py", "exec"), module.__dict__)
    sys.modules["smooth"] = module
    tests_spec = importlib.util.spec_from_file_location("the_tests", "test_smooth.py")
    tests = importlib.util.module_from_spec(tests_spec)
    tests_spec.loader.exec_module(tests)
    functions = [f for name, f in vars(tests).items() if name.startswith("test") and callable(f)]
    assert functions, "test_smooth.py has no test functions"
    failed = []
    for f in functions:
        try:
            f()
        except Exception:
            failed.append(f.__name__)
    return failed


def test_the_tests_pass_on_the_module():
    assert Path("test_smooth.py").is_file(), "there is no test_smooth.py"
    assert run_tests(Path("smooth.py").read_text()) == []


def test_the_tests_catch_a_bug():
    source = Path("smooth.py").read_text()
    mutant = source.replace('len(values) - window + 1', 'len(values) - window')
    assert mutant != source, "smooth.py was changed: the check cannot plant its bug"
    assert run_tests(mutant), "the tests pass even when smooth.py is broken (it drops the last window)"
