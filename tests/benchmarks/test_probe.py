"""What ``benchmarks.probe`` counts inside a benchmark's workers: here, the CPU time of
their garbage collections."""

from __future__ import annotations

import gc
import threading

from benchmarks import probe


def test_a_collection_set_off_while_the_probe_holds_its_lock_is_counted():
    # The probe's thread encodes its counts holding its lock, and any allocation there may
    # set off a collection: counting that collection must not wait for the lock.
    before = probe.COUNTS["gc_us"]
    probe.collections_watch()
    done = threading.Event()

    def collect_holding_the_lock() -> None:
        with probe._LOCK:
            gc.collect()
        done.set()

    try:
        threading.Thread(target=collect_holding_the_lock, daemon=True).start()
        assert done.wait(10)
    finally:
        gc.callbacks.remove(probe._collection_timed)
    assert probe.COUNTS["gc_us"] > before
