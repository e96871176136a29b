"""A sequential test's pairs: each pair's two matches played to their end on one deck, the
pair recorded, the test's statistic updated and the test decided, or more pairs created.

``tournaments.sequential`` creates, fills and cancels the tests; the task of a pair
(``tournaments.tasks.play_sequential_pair``) runs ``sequential_pair_play`` here.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from bots.models import Bot
from cardkit.engine import load_game
from cardkit.stats import sprt
from games.errors import MatchError
from games.models import DealGroup, Match
from games.sealing import (
    GroupDeal,
    deal_group_create,
    deal_group_of,
    deal_group_settle,
    deal_group_shrink,
    deal_groups_abandon,
)
from games.seating import SeatHolder
from tournaments.models import SequentialPair, SequentialTest
from tournaments.sequential import (
    pairs_fill,
    sequential_test_mark_over,
    unfinished_matches,
    user_tests_lock,
)
from tournaments.services import match_play_to_end, matches_abort

logger = logging.getLogger(__name__)


def sequential_pair_play(*, pair_id: int) -> str:
    """Play a pair's two matches to their end and record the pair; return its status.

    Call outside any transaction. A second call of a pair under way resumes its matches
    from their logs; a pair already recorded is left alone.
    """
    with transaction.atomic():
        pair = (
            SequentialPair.objects.select_for_update(of=("self",))
            .select_related("test")
            .get(pk=pair_id)
        )
        if pair.status in (SequentialPair.Status.DONE, SequentialPair.Status.FAILED):
            return pair.status
        if pair.test.status != SequentialTest.Status.RUNNING:
            pair.status, pair.error = SequentialPair.Status.FAILED, "the test is over"
            pair.save(update_fields=["status", "error", "updated_at"])
            return pair.status
        pair.attempts += 1
        pair.status = SequentialPair.Status.RUNNING
        pair.error = ""
        pair.save(update_fields=["attempts", "status", "error", "updated_at"])
        test = pair.test
    if pair.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
        return _pair_record(
            pair_id,
            error=f"gave up: its task's worker died {pair.attempts - 1} times; no bot is at fault",
        )
    try:
        for which in ("first", "second"):
            match_id = _pair_match(pair_id, which, test)
            if match_play_to_end(match_id=match_id) != Match.Status.FINISHED:
                # The arena's reason when it gave the match up (bots.leases.lease_claim).
                reason = Match.objects.values_list("forfeit_reason", flat=True).get(pk=match_id)
                return _pair_record(
                    pair_id, error=f"the {which} match did not finish: {reason or 'stopped'}"
                )
    except MatchError as exc:
        return _pair_record(pair_id, error=f"not created: {exc}")
    except Exception as exc:
        logger.exception("sequential pair %s failed", pair_id)
        return _pair_record(pair_id, error=repr(exc)[:500])
    return _pair_record(pair_id)


def _pair_match(pair_id: int, which: str, test: SequentialTest) -> int:
    """Return the id of the pair's ``first`` or ``second`` match, creating it once."""
    from games.services import match_create

    with transaction.atomic():
        pair = SequentialPair.objects.select_for_update().get(pk=pair_id)
        existing = getattr(pair, f"{which}_id")
        if existing is not None:
            return existing
        bots = Bot.objects.in_bulk([test.candidate_id, test.baseline_id, test.reference_id])
        seats = pair_seating(test, pair.seat, which)
        game = load_game(test.game, players=test.players)
        # A deck of the test is a deal group: the two matches of each of its pairs (one
        # pair in head_to_head mode, one a seat in reference mode) deal deck 0 of the
        # group's seed and are sealed until the deck's last match ends.
        per_deck = 1 if test.mode == SequentialTest.Mode.HEAD_TO_HEAD else test.players
        group = deal_group_create(
            kind=DealGroup.Kind.SEQUENTIAL, key=_deck_group_key(test.pk, pair.deck),
            size=2 * per_deck,
        )  # fmt: skip
        match = match_create(
            creator=test.created_by, game=test.game, players=test.players,
            deck_size=game.deck_size,
            seats=[SeatHolder(bot=bots[bot_id]) for bot_id in seats], rated=False, dealer=0,
            move_time_limit=test.move_time_limit, notify=False,
            deal=GroupDeal(group=group, number=0, copy=2 * pair.seat + (which == "second")),
        )  # fmt: skip
        setattr(pair, which, match)
        pair.save(update_fields=[which, "updated_at"])
        return match.pk


def _deck_group_key(test_id: int, deck: int) -> str:
    return f"sequential:{test_id}:deck:{deck}"


def _pair_release(test_id: int, pair: SequentialPair) -> None:
    """Unseal the pair's deck if it was the deck's last; a failed pair deals no more, so
    the deck no longer waits for the matches it did not deal."""
    group_id = deal_group_of(_deck_group_key(test_id, pair.deck))
    undealt = (pair.first_id is None) + (pair.second_id is None)
    if group_id is not None and pair.status == SequentialPair.Status.FAILED and undealt:
        deal_group_shrink(group_id=group_id, by=undealt)
    elif group_id is not None:
        deal_group_settle(group_id=group_id)


def pair_seating(test: SequentialTest, seat: int, which: str) -> list[int]:
    """The bot ids in the seats of a pair's ``first`` or ``second`` match.

    head_to_head: the candidate in seat 0 of the first match and seat 1 of the second.
    reference: the candidate in ``seat`` of the first, the baseline in it in the second,
    the reference player everywhere else.
    """
    if test.mode == SequentialTest.Mode.HEAD_TO_HEAD:
        order = [test.candidate_id, test.baseline_id]
        return order if which == "first" else order[::-1]
    seats = [test.reference_id] * test.players
    seats[seat] = test.candidate_id if which == "first" else test.baseline_id
    return seats


def pair_result(test: SequentialTest, pair: SequentialPair, first: Match, second: Match) -> int:
    """The pair's outcome index (the candidate's points over the two games, doubled)."""
    if test.mode == SequentialTest.Mode.HEAD_TO_HEAD:
        return sprt.pair_outcome(
            sprt.game_score(first.loser, 0), 1.0 - sprt.game_score(second.loser, 1)
        )
    return sprt.pair_outcome(
        sprt.game_score(first.loser, pair.seat), sprt.game_score(second.loser, pair.seat)
    )


def _pair_record(pair_id: int, *, error: str = "") -> str:
    """Record a pair (once), update its test and decide it or create more pairs."""
    match_ids: list[int] = []
    test_id, user_id = SequentialPair.objects.values_list("test_id", "test__created_by_id").get(
        pk=pair_id
    )
    with transaction.atomic():
        user_tests_lock(user_id)
        test = SequentialTest.objects.select_for_update().get(pk=test_id)
        pair = SequentialPair.objects.select_for_update().get(pk=pair_id)
        if pair.status in (SequentialPair.Status.DONE, SequentialPair.Status.FAILED):
            return pair.status
        if not error and test.status != SequentialTest.Status.RUNNING:
            # Decided (or cancelled) while this pair was played: it does not count.
            error = f"the test was {test.status} before this pair ended"
        if error:
            pair.status, pair.error = SequentialPair.Status.FAILED, error[:500]
            logger.warning("sequential test %s pair %s failed: %s", test.pk, pair.index, error)
        else:
            first, second = (
                Match.objects.get(pk=pair.first_id),
                Match.objects.get(pk=pair.second_id),
            )
            pair.outcome = pair_result(test, pair, first, second)
            pair.status = SequentialPair.Status.DONE
        pair.save(update_fields=["status", "error", "outcome", "updated_at"])
        if test.status == SequentialTest.Status.RUNNING:
            _test_update(test, pair)
            if test.status != SequentialTest.Status.RUNNING:
                match_ids = unfinished_matches(test.pk)
        test.save()
        pairs_fill(test.created_by_id)
        _pair_release(test.pk, pair)
        over = test.status != SequentialTest.Status.RUNNING
    if match_ids:
        matches_abort(match_ids=match_ids, reason="the sequential test is decided")
    if over:
        deal_groups_abandon(key_prefix=f"sequential:{test.pk}:deck:")
    return pair.status


def _test_update(test: SequentialTest, pair: SequentialPair) -> None:
    if pair.outcome is not None:
        test.counts[pair.outcome] += 1
        test.pairs_done += 1
        test.llr = sprt.llr(test.counts, test.elo0, test.elo1, model=test.model)
        test.llr_history.append(round(test.llr, 4))
    verdict = sprt.decision(test.llr, test.alpha, test.beta)
    if verdict:
        sequential_test_mark_over(test, SequentialTest.Status.ACCEPTED if verdict == "H1" else
                SequentialTest.Status.REJECTED)  # fmt: skip
        return
    settled = (
        SequentialPair.objects.filter(test=test)
        .filter(Q(status=SequentialPair.Status.DONE) | Q(status=SequentialPair.Status.FAILED))
        .count()
    )
    if settled >= test.max_games // 2:
        sequential_test_mark_over(test, SequentialTest.Status.CAPPED)
