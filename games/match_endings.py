"""Ending a match early: a seat forfeits or resigns, or the arena aborts the match.

Each action locks the match's row first, as ``games.services``' actions do, and is one
transaction; the clock (``games.clock.match_forfeit_locked``) records a forfeit's result.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from games import clock
from games.errors import InvalidMatchRequest, MatchNotActive
from games.events import Change, match_changed_announce
from games.models import Match

logger = logging.getLogger(__name__)


def match_forfeit(
    *,
    match_id: int,
    seat: int,
    code: str,
    detail: str,
    expected_ply: int | None = None,
    now: datetime | None = None,
) -> Match:
    """End an active match with ``seat`` as its loser (a fool series is lost too).

    ``code`` becomes ``end_reason`` ("timeout", "forfeit", "resign", ...) and ``detail``
    the ``forfeit_reason``. Idempotent: do nothing if the match is not active or, when
    ``expected_ply`` is given, if it has moved past that ply.
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.ACTIVE:
            return match
        if expected_ply is not None and match.ply != expected_ply:
            return match
        if not 0 <= seat < match.players:
            raise InvalidMatchRequest(f"seat {seat} is not in this match")
        clock.match_forfeit_locked(
            match=match, seat=seat, code=code, detail=detail, now=now or timezone.now()
        )
    return match


def match_abort(*, match_id: int, code: str, detail: str) -> Match:
    """End an active or waiting match with no result and no loser: the arena could not
    play it (``code`` becomes ``end_reason``, ``detail`` says what failed, in
    ``forfeit_reason`` with no forfeit seat). No seat loses and no bot is blamed.
    Idempotent: a match already over is returned as it is."""
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status not in (Match.Status.ACTIVE, Match.Status.WAITING):
            return match
        match.status = Match.Status.ABORTED
        match.finished_at = timezone.now()
        match.end_reason = code[:20]
        match.forfeit_reason = detail[:500]
        match.to_move = match.turn_started_at = match.deadline_at = None
        match.save(
            update_fields=[
                "status", "finished_at", "end_reason", "forfeit_reason", "to_move",
                "turn_started_at", "deadline_at",
            ]
        )  # fmt: skip
        logger.info("match %s aborted: %s", match.pk, detail, extra={"match_id": match.pk})
        match_changed_announce(match, Change.ABORTED)
    return match


def match_resign(*, match_id: int, seat: int) -> Match:
    """End an active match with ``seat`` resigning (its loser, ``end_reason`` "resign").

    The status is read under the match's lock, so of two seats resigning at once one
    resigns and the other gets MatchNotActive; so does a seat of a match already over.
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=match_id)
        if match.status != Match.Status.ACTIVE:
            raise MatchNotActive(match.status, match.ply)
        if not 0 <= seat < match.players:
            raise InvalidMatchRequest(f"seat {seat} is not in this match")
        clock.match_forfeit_locked(
            match=match, seat=seat, code="resign", detail=f"seat {seat} resigned",
            now=timezone.now(),
        )  # fmt: skip
    return match
