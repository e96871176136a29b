"""Each owner's share of the I/O pool, counted in Redis (``bots.share``): admitted up to the
cap, given back, lapsed when the process that made a call died, and a dispatch that never
waits for the owner's row."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.conf import settings

pytestmark = [pytest.mark.real_services]


@pytest.fixture
def shares():
    """Owners' shares on the test Redis, under a namespace of this test's own."""
    from bots.share import OwnerShares

    if not settings.BOTS_CALLS_SHARE_URL:
        pytest.fail("the real-services pass has Redis: BOTS_CALLS_SHARE_URL is set")
    return OwnerShares(settings.BOTS_CALLS_SHARE_URL, f"test-{uuid.uuid4().hex}")


def test_an_owners_calls_are_admitted_up_to_the_cap_and_freed_when_given_back(shares):
    assert shares.admit(owner_id=1, call="10:a", hold=30, cap=2)
    assert shares.admit(owner_id=1, call="11:a", hold=30, cap=2)
    assert not shares.admit(owner_id=1, call="12:a", hold=30, cap=2)
    # A call counted already stays counted (its match's next call, by the same driver).
    assert shares.admit(owner_id=1, call="11:a", hold=30, cap=2)
    # Another owner's share is its own.
    assert shares.admit(owner_id=2, call="12:b", hold=30, cap=2)

    shares.release(owner_id=1, call="10:a")

    assert shares.admit(owner_id=1, call="12:a", hold=30, cap=2)
    assert shares.count(1) == 2


def test_a_call_whose_process_died_stops_counting_when_its_entry_lapses(shares):
    assert shares.admit(owner_id=1, call="10:dead", hold=0.2, cap=1)
    assert not shares.admit(owner_id=1, call="11:a", hold=30, cap=1)

    time.sleep(0.5)  # no heartbeat renews the dead process's call

    assert shares.admit(owner_id=1, call="11:a", hold=30, cap=1)


def test_the_heartbeat_keeps_calls_counted_and_writes_back_what_redis_lost(shares):
    shares.admit(owner_id=1, call="10:a", hold=0.2, cap=1)
    shares.renew([(1, "10:a")], hold=30)
    time.sleep(0.5)
    assert not shares.admit(owner_id=1, call="11:a", hold=30, cap=1)

    shares.release(owner_id=1, call="10:a")  # as a Redis that lost the entry
    shares.renew([(1, "10:a")], hold=30)

    assert not shares.admit(owner_id=1, call="11:a", hold=30, cap=1)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_owners_dispatches_do_not_wait_for_each_other(user_factory, monkeypatch):
    """Counted in the database, every dispatch of an owner's calls took the owner's row
    ``FOR UPDATE`` until its commit: one owner's dispatches queued behind each other, and
    behind the whole transaction of the answer that the pool dispatches in."""
    from django.db import transaction
    from django.utils import timezone

    from bots import calls, tasks
    from bots.models import BotTurnLease
    from games.seating import SeatHolder
    from games.services import match_create

    owner, person = user_factory(), user_factory()
    matches = [
        match_create(
            creator=owner, game="durak", players=2,
            seats=[SeatHolder(user=owner), SeatHolder(user=person)],
        )  # fmt: skip
        for _ in range(2)
    ]
    for match in matches:
        BotTurnLease.objects.create(
            match=match, holder="driver", ply=0,
            expires_at=timezone.now() + timedelta(seconds=30),
        )  # fmt: skip
    sent = []
    monkeypatch.setattr(tasks.bot_call, "apply_async", lambda args, queue: sent.append(args[0]))

    def call(match) -> dict:
        return {
            "match_id": match.pk, "ply": 0, "seat": 0, "bot_id": 0, "owner_id": owner.pk,
            "url": "http://127.0.0.1:9/move", "secret": "s", "payload": {}, "time_limit": 1.0,
            "holder": "driver", "queued_at": time.time(), "send_by": None, "recovers": False,
        }  # fmt: skip

    first_dispatched, second_dispatched, finish = (threading.Event() for _ in range(3))

    def in_thread(work) -> threading.Thread:
        def run() -> None:
            from django.db import connection

            try:
                work()
            finally:
                connection.close()

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def first() -> None:
        # As the pool does: the dispatch inside the transaction of the answer before.
        with transaction.atomic():
            calls.call_dispatch(call(matches[0]))
            first_dispatched.set()
            finish.wait(timeout=60)

    def second() -> None:
        calls.call_dispatch(call(matches[1]))
        second_dispatched.set()

    threads = [in_thread(first)]
    assert first_dispatched.wait(timeout=30)
    threads.append(in_thread(second))
    second_dispatched.wait(timeout=30)
    dispatched_meanwhile = second_dispatched.is_set()
    finish.set()
    for thread in threads:
        thread.join(timeout=60)

    assert dispatched_meanwhile
    assert sorted(c["match_id"] for c in sent) == sorted(m.pk for m in matches)
    assert {lease.calling_owner_id for lease in BotTurnLease.objects.all()} == {owner.pk}
