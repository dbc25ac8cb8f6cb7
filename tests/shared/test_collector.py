"""wreck/collector.py: a daemon's collector settings once it serves."""

import gc

from wreck import collector


def test_settle_freezes_what_is_loaded_and_raises_the_young_threshold():
    before = gc.get_threshold()
    try:
        kept = [object() for _ in range(3)] + [[]]  # a container, so the collector tracks it
        collector.settle()
        assert gc.get_freeze_count() > 0  # in the permanent generation: no collection walks it
        young, middle, old = gc.get_threshold()
        assert young == collector.YOUNG_THRESHOLD > before[0]
        assert (middle, old) == before[1:]  # only the young generation changes
        del kept
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
