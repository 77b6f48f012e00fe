"""The collector paused around a parse, and a step's heap frozen while it works."""

from __future__ import annotations

import gc

from synthesis import heap


def test_the_collector_is_paused_inside_and_as_it_was_after():
    assert gc.isenabled()
    with heap.collector_paused():
        assert not gc.isenabled()
        with heap.collector_paused():  # nested: the outer block restores it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with heap.collector_paused():
            pass
        assert not gc.isenabled()  # a caller that had paused it keeps it paused
    finally:
        gc.enable()


def test_a_frozen_block_thaws_what_it_froze_and_only_when_nothing_was_frozen_before():
    gc.unfreeze()  # an earlier test may have run the CLI in this process, which freezes
    held = [{"n": i} for i in range(1000)]
    with heap.frozen():
        assert gc.get_freeze_count() >= len(held)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # as a run forked from the run host starts
    try:
        shared = gc.get_freeze_count()
        with heap.frozen():
            pass
        assert gc.get_freeze_count() >= shared  # the shared heap is not thawed
    finally:
        gc.unfreeze()


def test_objects_in_a_frozen_block_are_still_freed_when_unreferenced():
    import weakref

    class Box:
        pass

    box = Box()
    alive = weakref.ref(box)
    with heap.frozen():
        del box  # reference counting, not the collector, frees it
        assert alive() is None
