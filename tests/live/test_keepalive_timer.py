"""Keep-alive waits share one timer per hub (``games.live_timer``), not one per stream."""

from __future__ import annotations

import asyncio
import time

from games import live


async def _waiting(count: int, timeout: float, message_to: int | None = None):
    """Start ``count`` keep-alive waits on a new hub; return the timers they added, their
    answers, the seconds from before the first wait to the last answer, and the sleepers
    left on the shared timer."""
    loop = asyncio.get_running_loop()
    hub = live.Hub(loop)
    await asyncio.sleep(0)  # the hub's own task starts (the embedded hub: its socket's server)
    before = len(loop._scheduled)
    started = loop.time()
    waiters = [hub.waiter([live.match_key(i)]) for i in range(count)]
    waits = [asyncio.create_task(w.wait(timeout, shared_timer=True)) for w in waiters]
    await asyncio.sleep(0)
    timers = len(loop._scheduled) - before
    if message_to is not None:
        hub.deliver(live.match_key(message_to), {"match": message_to})
    answers = await asyncio.gather(*waits)
    took = loop.time() - started
    left = hub.timer.sleeping()
    hub.close()
    return timers, answers, took, left


def test_keep_alive_waits_of_a_hundred_waiters_add_one_timer_and_end_after_their_timeout(
    settings,
):
    settings.LIVE_PUBSUB_URL = ""  # the embedded hub: no Redis needed
    timers, answers, took, left = asyncio.run(_waiting(100, 0.2))
    assert timers == 1  # one call_later per wait before: 100
    assert answers == [False] * 100  # no message: each ends as a keep-alive
    assert took >= 0.2
    assert left == 0


def test_a_message_ends_a_keep_alive_wait_and_the_shared_timer_forgets_it(settings):
    settings.LIVE_PUBSUB_URL = ""
    timers, answers, took, left = asyncio.run(_waiting(3, 0.3, message_to=1))
    assert answers == [False, True, False]
    assert left == 0


def test_the_shared_timer_wakes_at_most_a_batch_of_waiters_in_one_turn_of_the_loop():
    from games.live_timer import WAKE_BATCH, SharedTimer

    async def woken_by_turn() -> list[int]:
        loop = asyncio.get_running_loop()
        timer = SharedTimer(loop)
        futures = [loop.create_future() for _ in range(2 * WAKE_BATCH + 10)]
        for index, future in enumerate(futures):
            timer.sleep(index, 0.02, future)
        # On a loaded machine the sleepers fell asleep over more than one tick: block
        # the loop until every one is due, so the first tick finds them all due.
        time.sleep(0.05)
        counts: list[int] = []
        everyone = loop.create_future()

        def count() -> None:  # once a turn of the loop
            counts.append(sum(future.done() for future in futures))
            if counts[-1] < len(futures):
                loop.call_soon(count)
            else:
                everyone.set_result(None)

        count()
        await asyncio.wait_for(everyone, 5)
        return counts

    counts = asyncio.run(woken_by_turn())
    steps = [after - before for before, after in zip(counts, counts[1:], strict=False)]
    assert max(steps) == WAKE_BATCH  # one turn's batch, the rest after it
    assert sorted(step for step in steps if step) == [10, WAKE_BATCH, WAKE_BATCH]
