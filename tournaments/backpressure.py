"""Backpressure: tournament matches go to the workers at the rate they are played.

A round's matches are not all sent at once: at most ``TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT``
of a tournament, ``TOURNAMENT_IN_FLIGHT_PER_OWNER`` of one owner's tournaments and
``TOURNAMENT_IN_FLIGHT`` in all are in flight (sent and not finished); the others wait
in the database. Each time a match is recorded, a tournament starts or beat's watchdog
runs, ``tournament_matches_dispatch`` fills the free slots, taking one match from each
tournament in turn (oldest first), so that two owners' tournaments share the slots and
one big tournament keeps at most a few tasks in the broker's queue ahead of the ladder's
and the interactive queue's work.
"""

from __future__ import annotations

from collections import Counter

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from tournaments.dispatch import after_commit, inline_playing, send_round
from tournaments.models import Tournament, TournamentMatch

# pg_advisory_xact_lock's key: two dispatchers at once would count the same free slots.
_LOCK_KEY = "tournaments.backpressure"


def in_flight() -> Q:
    """The tournament matches that hold a slot: sent and not done."""
    return Q(status=TournamentMatch.Status.RUNNING) | Q(
        status=TournamentMatch.Status.PENDING, dispatched_at__isnull=False
    )


def tournament_matches_dispatch() -> list[int]:
    """Send the workers as many waiting tournament matches as the free slots allow; return
    the ids of the tournament matches sent (after commit). Nothing is sent while a
    process plays the matches itself (``inline_play``). Call it outside a transaction,
    or let the caller's commit send them."""
    if inline_playing():
        return []
    with transaction.atomic():
        _lock()
        chosen = _matches_choose()
        if chosen:
            TournamentMatch.objects.filter(pk__in=chosen).update(
                dispatched_at=timezone.now(), updated_at=timezone.now()
            )
            after_commit(lambda: send_round(chosen))
    return chosen


def _lock() -> None:
    # SQLite's transactions begin IMMEDIATE (cardserver/settings/base.py): the write lock
    # is held already.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [_LOCK_KEY])


def _matches_choose() -> list[int]:
    tournaments = list(
        Tournament.objects.filter(status=Tournament.Status.RUNNING)
        .order_by("started_at", "pk")
        .values_list("pk", "created_by_id", "current_round")
    )
    if not tournaments:
        return []
    owner_of = {pk: owner for pk, owner, _ in tournaments}
    busy = Counter(
        TournamentMatch.objects.filter(in_flight(), tournament_id__in=owner_of).values_list(
            "tournament_id", flat=True
        )
    )
    owners_busy: Counter = Counter()
    for tournament_id, count in busy.items():
        owners_busy[owner_of[tournament_id]] += count
    room = settings.TOURNAMENT_IN_FLIGHT - sum(busy.values())
    per_tournament = settings.TOURNAMENT_IN_FLIGHT_PER_TOURNAMENT
    waiting = {}
    for pk, _owner, current_round in tournaments:
        free = per_tournament - busy[pk]
        if free > 0 and room > 0:
            waiting[pk] = list(
                TournamentMatch.objects.filter(
                    tournament_id=pk,
                    round=current_round,
                    status=TournamentMatch.Status.PENDING,
                    dispatched_at=None,
                )
                .order_by("index")
                .values_list("pk", flat=True)[: min(free, room)]
            )
    chosen: list[int] = []
    # One match from each tournament in turn, while slots are free.
    while room > 0 and any(waiting.values()):
        for pk in list(waiting):
            owner = owner_of[pk]
            if not waiting[pk] or owners_busy[owner] >= settings.TOURNAMENT_IN_FLIGHT_PER_OWNER:
                waiting.pop(pk)
                continue
            chosen.append(waiting[pk].pop(0))
            owners_busy[owner] += 1
            room -= 1
            if room == 0:
                break
    return chosen
