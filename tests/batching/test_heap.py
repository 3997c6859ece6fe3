"""The batch's frozen heap: objects from before it are left out of the collector's passes while it runs."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from nbagent.batching.heap import frozen_heap

pytestmark = pytest.mark.usefixtures("thawed_heap")


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the collector frees it


def test_objects_from_before_wait_and_objects_made_inside_are_collected():
    before = Node()
    gone_before = weakref.ref(before)
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        del before
        inside = Node()
        gone_inside = weakref.ref(inside)
        del inside
        gc.collect()
        assert gone_inside() is None  # made during the block: collected as usual
        assert gone_before() is not None  # frozen: waits for the end of the block
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert gone_before() is None


def test_overlapping_uses_share_one_freeze_that_ends_with_the_last():
    entered, release = threading.Event(), threading.Event()

    def other():
        with frozen_heap():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(10)
    with frozen_heap():
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 0  # the inner block ending does not thaw the outer ones
    assert gc.get_freeze_count() > 0  # the other thread's block still runs
    release.set()
    thread.join(10)
    assert gc.get_freeze_count() == 0


def test_a_heap_the_process_froze_before_the_batch_is_frozen_again_after_it():
    garbage = Node()
    gone = weakref.ref(garbage)
    gc.freeze()  # as nbagent's Jupyter server does at start-up
    del garbage
    with frozen_heap():
        pass
    assert gc.get_freeze_count() > 0  # frozen again: the host's full collections still skip its objects
    assert gone() is None  # the garbage the freezes held back was collected first
