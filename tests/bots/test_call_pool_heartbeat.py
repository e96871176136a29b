"""What the I/O pool renews only when it must: the heartbeat, a call's claim once it
comes within CALL_HELD seconds (a renewal before would change nothing:
``bots.pool.claims_due``); the dispatch, an owner's entry in its share in Redis, which
the match's call before left there, once it lasts too little (``bots.calls.call_dispatch``)."""

from __future__ import annotations

import time

import pytest

from bots import pool
from bots.calls import share_member
from bots.models import BotTurnLease
from bots.share import owner_shares
from tests.bots.test_call_pool_batch import good, matches_with_calls, pooled  # noqa: F401

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


def test_the_heartbeat_skips_a_claim_held_long_enough_and_renews_it_once_due(
    user,
    http_bot_record,
    pooled,  # noqa: F811 - the fixture imported above
):
    _matches, (call,) = matches_with_calls(user, http_bot_record, pooled, 1)
    lease = BotTurnLease.objects.get(match_id=call["match_id"])
    # The call carries its claim's expiry as the dispatch wrote it.
    assert call["claim_until"] == pytest.approx(lease.expires_at.timestamp(), abs=0.001)
    claim = (call["match_id"], call["holder"], call["ply"])
    claims = {claim: (call["owner_id"], call["claim_until"])}

    assert pool.claims_due(claims, time.time()) == {}
    # What the skipped renewal would have done: nothing.
    pool.claims_renew({claim: call["owner_id"]})
    assert BotTurnLease.objects.get(pk=lease.pk).expires_at == lease.expires_at
    # Once the claim lasts less than CALL_HELD seconds, the beat renews it.
    later = call["claim_until"] - pool.CALL_HELD + 0.5
    assert pool.claims_due(claims, later) == {claim: call["owner_id"]}


def test_the_heartbeat_renews_at_every_beat_a_call_that_carries_no_claim_expiry():
    # A call queued before calls carried ``claim_until`` (the pool reads 0 for it).
    claims = {(1, "driver", 3): (7, 0.0)}

    assert pool.claims_due(claims, time.time()) == {(1, "driver", 3): 7}


def test_an_owners_next_call_in_a_match_keeps_its_share_entry_without_redis_while_it_lasts(
    user,
    http_bot_record,
    pooled,  # noqa: F811 - the fixture imported above
):
    _matches, (first,) = matches_with_calls(user, http_bot_record, pooled, 1)
    shares = owner_shares()
    assert shares is not None, "the real-services pass has Redis"

    def entry() -> float | None:
        member = share_member(first["match_id"], first["holder"])
        return shares._client.zscore(shares._key(first["owner_id"]), member)

    admitted = entry()
    assert admitted is not None and first["share_until"] > 0

    pool.answers_record([(first, good(first))])

    # Both seats' bots are the user's: the next call is the same entry, left as it was.
    (second,) = pooled.calls
    assert (second["ply"], second["share_until"]) == (1, first["share_until"])
    assert entry() == admitted
    # Once the entry would last too little, the next call is admitted again: renewed.
    pooled.calls.clear()
    pool.answers_record([({**second, "share_until": time.time() + 1.0}, good(second))])

    (third,) = pooled.calls
    assert third["share_until"] > first["share_until"]
    assert entry() > admitted
