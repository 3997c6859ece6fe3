"""The kernel's change record without a kernel: fingerprints of real pandas and NumPy objects, and the
ledger's undo order, redo, turn limit and memory cap over a plain namespace dict."""

from __future__ import annotations

import pytest
import numpy as np
import pandas as pd

from nbagent.checkpoints.fingerprint import IMMUTABLE, MAX_ITEMS, Budget, fingerprint
from nbagent.checkpoints.kernel_ledger import KEEP_TURNS, KernelLedger
from nbagent.tools.kernel import KernelBridge


def test_a_large_frame_is_fingerprinted_on_a_sample_with_its_shape_and_dtypes():
    df = pd.DataFrame({"a": np.arange(1_000_000), "b": 1.0})
    before = fingerprint(df)
    df.iloc[0, 1] = 2.0  # the first rows are always in the sample
    assert fingerprint(df) != before
    before = fingerprint(df)
    df["a"] = df["a"].astype("int32")
    assert fingerprint(df) != before  # dtypes are part of it
    before = fingerprint(df)
    df["c"] = 0
    assert fingerprint(df) != before
    assert fingerprint(df) == fingerprint(df)


def test_arrays_containers_and_immutables():
    arr = np.zeros(10)
    before = fingerprint(arr)
    arr[3] = 1
    assert fingerprint(arr) != before
    nested = {"rows": [[1, 2], [3]]}
    before = fingerprint(nested)
    nested["rows"][1].append(4)
    assert fingerprint(nested) != before
    assert fingerprint({1, 2}) == fingerprint({2, 1})
    assert fingerprint("text") == fingerprint(3.5) == fingerprint((1, "a")) == IMMUTABLE


def test_what_cannot_be_fingerprinted_in_budget_is_not_checked():
    assert fingerprint(object()) is None
    assert fingerprint(np.array([object()])) is None
    assert fingerprint(list(range(MAX_ITEMS + 1))) is None
    assert fingerprint([1], Budget(-1)) is None  # the namespace's time budget is spent


def ledger_over(namespace: dict, **options) -> KernelLedger:
    return KernelLedger(KernelBridge(namespace), **options)


def call(ledger: KernelLedger, namespace: dict, turn: int, code: str):
    snap = ledger.before()
    exec(code, namespace)
    return ledger.after(snap, turn, f"turn{turn}", f"call{turn}_{len(ledger.records)}")


def test_undo_takes_a_turns_calls_back_in_reverse_order_and_redo_replays_them():
    ns: dict = {"a": [1]}
    first = ns["a"]
    ledger = ledger_over(ns)
    call(ledger, ns, 1, "b = 'one'")
    call(ledger, ns, 1, "b = 'two'\na = None")
    done = ledger.undo(1)
    assert "b" not in ns and ns["a"] is first and done.restored == ["a", "b"]
    ledger.redo(1)
    assert ns["b"] == "two" and ns["a"] is None


def test_a_new_change_ends_redo_and_only_the_last_turns_are_kept():
    ns: dict = {}
    ledger = ledger_over(ns)
    call(ledger, ns, 1, "x = 1")
    ledger.undo(1)
    call(ledger, ns, 2, "y = 2")
    assert [r.turn for r in ledger.records] == [2] and ledger.redo_target() is None
    for turn in range(3, KEEP_TURNS + 5):
        call(ledger, ns, turn, f"v{turn} = {turn}")
    assert len({r.turn for r in ledger.records}) == KEEP_TURNS


def test_the_cap_releases_the_oldest_held_values_first():
    ns: dict = {"old1": np.zeros(1000), "old2": np.zeros(1000)}  # 8 KB each
    ledger = ledger_over(ns, max_bytes=10_000)
    _, dropped = call(ledger, ns, 1, "old1 = None")
    assert dropped == []
    _, dropped = call(ledger, ns, 2, "old2 = None")
    assert dropped == ["old1 (turn 1)"]  # the oldest went; turn 2's value is still held
    done = ledger.undo(2)
    assert isinstance(ns["old2"], np.ndarray) and not done.not_restored
    done = ledger.undo(1)
    assert ns["old1"] is None and done.not_restored == ["old1 (its old value was released by the memory cap)"]


@pytest.mark.process
def test_a_later_turn_that_changes_only_files_ends_the_kernels_redo_and_the_other_way_round(make_agent, tmp_path):
    ns: dict = {"x": 1}

    def run(code):
        exec(code, ns)
        return {"stdout": "", "stderr": "", "result": None, "error": None}

    from nbagent.testing import Call, Reply

    agent = make_agent(Reply(tool_calls=[Call("kernel_run", {"code": "x = 2"})]), "kernel changed",
                       Reply(tool_calls=[Call("write_file", {"path": "a.txt", "content": "a"})]), "file written",
                       Reply(tool_calls=[Call("kernel_run", {"code": "y = 3"})]), "kernel again",
                       approval="auto", kernel_run_auto=True, kernel=KernelBridge(ns, run))
    agent.run("change x")
    agent.undo()
    assert ns["x"] == 1 and agent.snapshot().redo_turn == 1
    agent.run("write a file")  # turn 2 changes files only: turn 1's kernel change can no longer be redone
    assert agent.snapshot().redo_turn is None and agent.snapshot().undo_turn == 2
    assert (tmp_path / "a.txt").read_text() == "a"
    agent.undo()
    assert not (tmp_path / "a.txt").exists() and agent.snapshot().redo_turn == 2
    agent.run("set y")  # turn 3 changes the kernel only: turn 2's files can no longer be redone
    assert agent.snapshot().redo_turn is None
    assert [e for e in agent.runtime.guard.checkpoints.manifest.entries if e.undone] == []


def test_the_record_does_not_keep_alive_what_the_agent_bound_and_the_user_deleted():
    import gc
    import weakref

    class Big:
        pass

    ns: dict = {"Big": Big}
    ledger = ledger_over(ns)
    call(ledger, ns, 1, "made = Big()")
    made = weakref.ref(ns["made"])
    del ns["made"]  # the user frees it
    gc.collect()
    assert made() is None
    assert ledger.conflicts("undo", 1) == ["made"]  # and undo says the user changed it since
