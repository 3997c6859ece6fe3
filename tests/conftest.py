"""Shared test setup: no test reads the developer's model settings or starts a real model by accident;
no test writes outside its temporary directories (HOME, the XDG and Jupyter directories and the
working directory are temporary, and the suite fails if the checkout's own ``.nbagent/`` changed);
one ``make_agent`` factory for every folder (a folder may override ``agent_workspace`` and
``agent_defaults``)."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# Property tests draw the same examples on every run, so a landing is never decided by a new draw;
# HYPOTHESIS_PROFILE=explore draws new ones, to look for counterexamples on purpose.
hypothesis_settings.register_profile("stable", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "stable"))

CHECKOUT = Path(__file__).resolve().parents[1]
_HOME_ENV = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
             "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR")
_STATE = {"before": None, "home": None}


def _fingerprint(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time (empty when it does not exist)."""
    found = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return found


def pytest_configure(config):
    """One temporary home for the whole run, set before any test (and any subprocess it starts) reads
    it: the user's settings, global memory, Jupyter and IPython directories are never touched."""
    home = Path(tempfile.mkdtemp(prefix="nbagent-test-home-"))
    _STATE["home"] = home
    for name in _HOME_ENV:
        folder = home if name == "HOME" else home / name.lower()
        folder.mkdir(mode=0o700, exist_ok=True)
        os.environ[name] = str(folder)
    _STATE["before"] = _fingerprint(CHECKOUT / ".nbagent")
    if FAST:
        _warm_caches()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if a test wrote into the checkout's own ``.nbagent/`` (it would show up in the
    developer's ``nbagent sessions list`` and ``nbagent stats``)."""
    _forget_shells_at_exit()
    if _STATE["before"] is None:
        return
    after = _fingerprint(CHECKOUT / ".nbagent")
    changed = sorted(k for k in set(after) | set(_STATE["before"]) if after.get(k) != _STATE["before"].get(k))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (f"the checkout's .nbagent/ changed during the tests ({', '.join(changed[:10])}): a test "
                   "wrote outside its temporary directories")
        if reporter is not None:
            reporter.write_line(f"FAILED {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _temporary_working_directory(tmp_path_factory, monkeypatch):
    """Each test starts in an empty directory of its own: an agent given no workspace works there."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))

_MODEL_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NBAGENT_MODEL", "NBAGENT_API", "NBAGENT_TOOLSETS",
              "NBAGENT_APPROVAL", "NBAGENT_MAX_STEPS", "NBAGENT_MEMORY", "NBAGENT_WORKSPACE",
              "NBAGENT_PERSIST", "NBAGENT_COMPACT_THRESHOLD", "NBAGENT_OUTPUT_LIMIT", "NBAGENT_VISION",
              "NBAGENT_VISION_MODELS", "NBAGENT_IMAGE_MAX_SIDE", "NBAGENT_MAX_IMAGES")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch):
    for name in _MODEL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NBAGENT_LOCAL", "off")
    # The tests were written against "ask", the mode that asks about every change; an agent given no mode
    # is "sandboxed" where the sandbox works (tests/security/test_sandbox.py tests that default).
    monkeypatch.setenv("NBAGENT_APPROVAL", "ask")
    yield


@pytest.fixture
def agent_workspace(tmp_path):
    """The workspace ``make_agent``'s agents work on."""
    return tmp_path


@pytest.fixture
def agent_defaults():
    """Options every agent made by ``make_agent`` gets unless the test gives its own."""
    return {}


@pytest.fixture
def make_agent(agent_workspace, agent_defaults):
    """``make_agent(*replies, **options)``: an Agent with a ScriptedModel of ``replies`` (or ``model=``);
    every agent made is closed after the test."""
    from nbagent.testing import agent_factory

    make, close_all = agent_factory(agent_workspace, **agent_defaults)
    yield make
    close_all()


import os  # noqa: E402  (kept beside the one statement that needs them)
import tempfile  # noqa: E402

# No test (nor a kernel or CLI it starts) reads or writes the developer's own config folder: the trust
# record of approved commands (nbagent.workspace.trust), mcp.json and the global instructions live there.
os.environ["NBAGENT_CONFIG_DIR"] = tempfile.mkdtemp(prefix="nbagent-tests-config-")


# --- Tiers: what a test needs, and the fast run that needs none of it ------------------------------
# A test is marked by what it needs (pyproject's markers): `process` (git, ripgrep, bash, the CLI),
# `kernel`, `server`, `browser`, `llama`. Two of them follow from where a test is, so they are set here
# rather than in each file: a pytest-jupyter fixture means a real Jupyter server, tests/browser/ means
# Chromium. `scripts/test.sh --fast` runs what needs none of them, with NBAGENT_TEST_FAST=1, under which a
# test that starts a process anyway fails and says which marker it lacks: the fast tier stays honest.
_SLOW_FOLDERS = {"browser": "browser", "jupyter/server/hub": "server", "install": "process"}
FAST = os.environ.get("NBAGENT_TEST_FAST") == "1"

# The sandbox is probed once per process (one bwrap run, nbagent.workspace.sandbox.current): here, before
# any test, so that a fast test whose agent reports its settings starts no process for it.
from nbagent.workspace.sandbox import current as _probe_sandbox  # noqa: E402

_probe_sandbox()


# The files that took longest without a browser (seconds on 2 workers, from --junitxml, December 2026):
# handed to the pytest-xdist workers first (scripts/test.sh runs with --no-loadscope-reorder, which keeps
# this order), so that the two workers end together instead of one running a 35 s file alone at the end.
# A stale list only schedules worse; it never changes what runs.
LONGEST_FIRST = (
    "jupyter/server/test_remote_kernel_undo.py",  # 37 s
    "evals/public/test_public_benchmarks.py",  # 36 s
    "evals/test_builtin_suite.py",  # 35 s
    "jupyter/server/hub/test_jupyterhub.py",  # 25 s
    "mcp/test_mcp_client.py",  # 24 s
    "acp/test_client_capabilities.py",  # 23 s
    "jupyter/server/test_mcp_kernel.py",  # 21 s
    "acp/test_acp_agent.py",  # 21 s
    "evals/test_harness.py",  # 17 s
    "jupyter/server/test_api_properties.py",  # 17 s
    "cli/test_cli.py",  # 16 s
    "tools/notebook/test_notebook_check.py",  # 15 s
    "store/test_kill_mid_write.py",  # 15 s
    "install/test_wheel.py",  # 13 s
)


def _where(item) -> str:
    """The test file's path under tests/ ("" for a file elsewhere, e.g. a notebook under nbval)."""
    tests = CHECKOUT / "tests"
    return item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else ""


@pytest.fixture(autouse=True, scope="module")
def _earlier_objects_frozen():
    """Tests run on a frozen heap: what was alive before the module (the imported modules, the collected
    tests, what earlier modules kept; half a million objects a worker) is collected once and frozen,
    so the full collections during the tests (IPython's reset makes one; the interpreter its own)
    walk only what the module made. They took 5-17 s of a worker's fast run before. Checked at each
    module, so that a test which thawed the heap and left it so costs only its own module."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True, scope="module")
def _widgets_closed_afterwards():
    """ipywidgets keeps every widget in its registry until it is closed: a module's views and their
    widgets (22,000 comms in a fast run) would stay alive, and walked, to the end of the run."""
    yield
    widgets = sys.modules.get("ipywidgets")
    if widgets is not None:
        widgets.Widget.close_all()


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_where(item), len(rank)))  # stable: a file's tests stay together
    for item in items:
        where = _where(item)
        for folder, marker in _SLOW_FOLDERS.items():
            if where.startswith(folder + "/"):
                item.add_marker(marker)
        if any(name.startswith("jp_") for name in getattr(item, "fixturenames", ())):
            item.add_marker("server")


if FAST:
    import subprocess  # noqa: E402

    _execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    _STARTED: list[str] = []
    _IN_A_TEST = [False]  # collection may start processes (GitPython asks `git --version` on import)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _IN_A_TEST[0] = True
        try:
            return (yield)
        finally:
            _IN_A_TEST[0] = False

    def _refuse_processes(self, args, *rest, **kwargs):
        if not _IN_A_TEST[0]:
            return _execute_child(self, args, *rest, **kwargs)
        first = args if isinstance(args, (str, bytes)) else (args[0] if args else "?")
        _STARTED.append(os.path.basename(str(first)))
        raise RuntimeError(f"--fast: this test starts a process ({_STARTED[-1]}); mark it "
                           "@pytest.mark.process (or kernel) so the fast run leaves it out")

    subprocess.Popen._execute_child = _refuse_processes  # type: ignore[attr-defined]


def _warm_caches() -> None:
    """What libraries ask another program once per machine or home, asked before the fast run's tests
    (in the temporary home): `uname -p` (the openai client's headers) and matplotlib's font cache
    (`fc-list`)."""
    import platform

    platform.processor()
    try:
        import matplotlib.font_manager  # noqa: F401
    except ImportError:
        pass

    @pytest.fixture(autouse=True)
    def _no_processes_in_the_fast_run():
        """The refusal above may be caught by the code under test (or raised on another thread): the
        test fails here all the same."""
        _STARTED.clear()
        yield
        if _STARTED:
            pytest.fail(f"--fast: this test starts a process ({_STARTED[0]}); mark it @pytest.mark.process "
                        "(or kernel) so the fast run leaves it out")


def _forget_shells_at_exit() -> None:
    """Each InteractiveShell a test made registered its exit work with atexit (save the history, reset
    the namespace, a full garbage collection): hundreds of them made the run wait 38 s after its last
    test. Their homes are temporary, so that work is left undone."""
    shell_module = sys.modules.get("IPython.core.interactiveshell")
    if shell_module is None:
        return
    import atexit

    gc.unfreeze()  # the shells of earlier modules are in the frozen generation
    shell_class = shell_module.InteractiveShell
    for obj in gc.get_objects():
        # type(), not isinstance(): isinstance asks the object its __class__, and openai's module-level
        # client proxies answer that by importing every resource of the SDK (1.5 s a process).
        if issubclass(type(obj), shell_class):
            atexit.unregister(obj.atexit_operations)
    # Frozen again: the interpreter's full collections as it exits skip the frozen generation (they
    # took 4-7 s of a worker's exit over a million objects, with the controller waiting on it).
    gc.freeze()
