"""Sequential tests on paired deals: create, fill with pairs, cancel, summarise.

A test is a row (``SequentialTest``) and its pairs (``SequentialPair``). A pair is two
unrated matches on one deck, dealt from the test's secret seed, that one Celery task
plays one after the other (``tournaments.sequential_pairs.sequential_pair_play``). After
every pair the test's counts and LLR are updated under a row lock, and either the test
is decided (the LLR crossed a bound), capped (``max_games`` reached), or more pairs are
created, as many as the user's games in flight allow. Every step is safe to run twice: a
pair is claimed under its lock and recorded once.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from bots.models import Bot, BotVersion
from bots.services import SYSTEM_USERNAME
from bots.versions import bot_and_version
from cardkit.engine import load_game
from cardkit.stats import sprt
from games.models import Match
from games.sealing import (
    deal_groups_abandon,
)
from tournaments.dispatch import TASKS, after_commit
from tournaments.models import SequentialPair, SequentialTest
from tournaments.services import matches_abort

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

IN_FLIGHT = (SequentialPair.Status.PENDING, SequentialPair.Status.RUNNING)


class SequentialTestError(ValueError):
    """A test that cannot be made as asked (400)."""


class SequentialTestQuota(SequentialTestError):
    """The user has run as many tests today as allowed (429)."""


class SequentialTestForbidden(SequentialTestError):
    """The user may not test these bots (403)."""


def _resolve(name: str) -> tuple[Bot, BotVersion | None]:
    try:
        bot, version = bot_and_version(name)
    except Bot.DoesNotExist:
        raise SequentialTestError(f"no bot is named {name.partition('@')[0]!r}") from None
    except BotVersion.DoesNotExist:
        raise SequentialTestError(f"{name!r} names no version of that bot") from None
    if version is not None and version.pk != bot.version_id:
        # The arena plays what the bot is now; an old version is a record, not a copy.
        raise SequentialTestError(
            f"{name} is not the bot's current version ({bot.name}@"
            f"{bot.version.label if bot.version else '?'}): only the current one can play"
        )
    return bot, version or bot.version


def sequential_test_create(
    *,
    user: User,
    candidate: str,
    baseline: str,
    game: str = "durak",
    players: int = 2,
    mode: str = SequentialTest.Mode.HEAD_TO_HEAD,
    reference: str = "greedy",
    elo0: float | None = None,
    elo1: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    model: str = "normalized",
    max_games: int | None = None,
    move_time_limit: float | None = None,
    trusted: bool = False,
) -> SequentialTest:
    """Create a test and send its first pairs to the workers (after commit).

    ``candidate`` and ``baseline`` are ``bot`` or ``bot@label`` (the current version).
    An owner may test their own bots against their own or the built-in ones; staff any.
    Raise SequentialTestForbidden, SequentialTestQuota (``SEQUENTIAL_TESTS_PER_DAY``) or
    SequentialTestError for options that make no test. ``trusted`` (the command line)
    skips the permission and the daily quota.
    """
    defaults = settings.SEQUENTIAL_TEST_DEFAULTS
    elo0 = defaults["elo0"] if elo0 is None else elo0
    elo1 = defaults["elo1"] if elo1 is None else elo1
    alpha = defaults["alpha"] if alpha is None else alpha
    beta = defaults["beta"] if beta is None else beta
    max_games = defaults["max_games"] if max_games is None else max_games
    move_time_limit = defaults["move_time_limit"] if move_time_limit is None else move_time_limit
    cand, cand_version = _resolve(candidate)
    base, base_version = _resolve(baseline)
    if not trusted:
        _check_allowed(user, cand, base)
    if cand_version is not None and cand_version == base_version or cand.pk == base.pk:
        raise SequentialTestError("the candidate and the baseline are the same bot version")
    if model not in sprt.MODELS:
        raise SequentialTestError(f"model is one of {', '.join(sprt.MODELS)}")
    if not -1000 <= elo0 < elo1 <= 1000:
        raise SequentialTestError("elo0 must be below elo1, both from -1000 to 1000")
    if not (0 < alpha < 0.5 and 0 < beta < 0.5):
        raise SequentialTestError("alpha and beta are between 0 and 0.5")
    if not 2 <= max_games <= settings.SEQUENTIAL_TEST_MAX_GAMES:
        raise SequentialTestError(
            f"max_games is from 2 to {settings.SEQUENTIAL_TEST_MAX_GAMES}"
        )
    try:
        load_game(game, players=players)
    except (ValueError, TypeError) as exc:
        raise SequentialTestError(str(exc)) from None
    ref = None
    if mode == SequentialTest.Mode.HEAD_TO_HEAD:
        if players != 2:
            raise SequentialTestError("head_to_head is for 2 players; use reference for more")
    elif mode == SequentialTest.Mode.REFERENCE:
        ref = Bot.objects.filter(
            kind=Bot.Kind.BUILTIN, name=reference, owner__username=SYSTEM_USERNAME
        ).first()
        if ref is None:
            raise SequentialTestError(
                f"the reference player is one of the arena's built-in bots, not {reference!r}"
            )
    else:
        raise SequentialTestError("mode is head_to_head or reference")
    for bot in (cand, base, ref):
        if bot is not None and game not in bot.games:
            raise SequentialTestError(f"{bot.name} does not play {game}")
        if bot is not None and not bot.enabled:
            raise SequentialTestError(f"{bot.name} is disabled")
    with transaction.atomic():
        # The lock serialises one user's creations, so the daily count holds.
        user_tests_lock(user.pk)
        day_ago = timezone.now() - timedelta(days=1)
        today = SequentialTest.objects.filter(created_by=user, created_at__gte=day_ago).count()
        if not (user.is_staff or trusted) and today >= settings.SEQUENTIAL_TESTS_PER_DAY:
            raise SequentialTestQuota(
                f"{today} tests in the last 24 hours: the limit is "
                f"{settings.SEQUENTIAL_TESTS_PER_DAY} (SEQUENTIAL_TESTS_PER_DAY)"
            )
        test = SequentialTest.objects.create(
            created_by=user, candidate=cand, candidate_version=cand_version, baseline=base,
            baseline_version=base_version, reference=ref, game=game, players=players,
            mode=mode, model=model, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta,
            max_games=max_games, move_time_limit=move_time_limit,
            seed=secrets.token_hex(16), counts=[0] * 5,
        )  # fmt: skip
        pairs_fill(user.pk)
    return test


def _check_allowed(user: User, candidate: Bot, baseline: Bot) -> None:
    """An owner tests their own bot against their own or a built-in one; staff any."""
    if user.is_staff:
        return
    if candidate.owner_id != user.pk:
        raise SequentialTestForbidden(
            f"{candidate.name} is not yours: test your own bots (staff may test any)"
        )
    if baseline.owner_id != user.pk and baseline.kind != Bot.Kind.BUILTIN:
        raise SequentialTestForbidden(
            f"{baseline.name} is not yours: the baseline is one of your bots or a built-in one"
        )


def sequential_test_cancel(*, test_id: int) -> SequentialTest:
    """Stop a running test: no pair starts any more; the matches under way are aborted."""
    user_id = SequentialTest.objects.values_list("created_by_id", flat=True).get(pk=test_id)
    with transaction.atomic():
        user_tests_lock(user_id)
        test = SequentialTest.objects.select_for_update().get(pk=test_id)
        if test.status != SequentialTest.Status.RUNNING:
            return test
        sequential_test_mark_over(test, SequentialTest.Status.CANCELLED)
        match_ids = unfinished_matches(test.pk)
        test.save()
        pairs_fill(test.created_by_id)
    if match_ids:
        matches_abort(match_ids=match_ids, reason="the sequential test was cancelled")
    deal_groups_abandon(key_prefix=f"sequential:{test.pk}:deck:")
    return test


def unfinished_matches(test_id: int) -> list[int]:
    pairs = SequentialPair.objects.filter(test_id=test_id, status__in=IN_FLIGHT)
    SequentialPair.objects.filter(test_id=test_id, status=SequentialPair.Status.PENDING).update(
        status=SequentialPair.Status.FAILED, error="cancelled"
    )
    ids = [m for pair in pairs.values_list("first_id", "second_id") for m in pair if m]
    return list(
        Match.objects.filter(pk__in=ids)
        .exclude(status__in=[Match.Status.FINISHED, Match.Status.ABORTED])
        .values_list("pk", flat=True)
    )


def user_tests_lock(user_id: int) -> None:
    """Lock the user's row: every change of a user's tests takes it first (then the test,
    then the pair), so that the games-in-flight count holds and no two changes deadlock."""
    get_user_model().objects.select_for_update().filter(pk=user_id).first()


def sequential_test_mark_over(test: SequentialTest, status: str) -> None:
    """Mark the test over with ``status`` (the caller saves it)."""
    test.status = status
    test.finished_at = timezone.now()


def pairs_fill(user_id: int) -> None:
    """Create pairs for the user's running tests, oldest first, while the user's games in
    flight (``SEQUENTIAL_GAMES_IN_FLIGHT``) and each test's cap allow; send them after
    commit. Call inside a transaction, holding the user's lock (``user_tests_lock``)."""
    in_flight = SequentialPair.objects.filter(
        test__created_by_id=user_id, status__in=IN_FLIGHT
    ).count()
    room = settings.SEQUENTIAL_GAMES_IN_FLIGHT // 2 - in_flight
    created: list[int] = []
    tests = SequentialTest.objects.filter(
        created_by_id=user_id, status=SequentialTest.Status.RUNNING
    ).order_by("created_at", "id")
    for test in tests:
        if room <= 0:
            break
        count = min(room, test.max_games // 2 - test.pairs_created)
        for _ in range(max(count, 0)):
            index = test.pairs_created
            per_deck = 1 if test.mode == SequentialTest.Mode.HEAD_TO_HEAD else test.players
            pair = SequentialPair.objects.create(
                test=test, index=index, deck=index // per_deck, seat=index % per_deck
            )
            created.append(pair.pk)
            test.pairs_created += 1
            room -= 1
        test.save(update_fields=["pairs_created"])
    if created:
        after_commit(lambda: _send_pairs(created))


# A pending pair's error while its task could not be sent: the evidence on which the
# watchdog sends it again (``sequential_pairs_resend``). A pending pair without it waits
# in its queue, however long; a pair whose worker died comes back from the broker, which
# redelivers the messages of a dead worker (cardserver/broker_held.py, and the embedded
# broker's restore_dead_claims).
PAIR_NOT_SENT = "its task could not be sent"


def _send_pairs(pair_ids: list[int]) -> None:
    for pair_id in pair_ids:
        try:
            TASKS.play_sequential_pair.delay(pair_id)
        except Exception:
            logger.exception("could not send play_sequential_pair(%s)", pair_id)
            SequentialPair.objects.filter(
                pk=pair_id, status=SequentialPair.Status.PENDING
            ).update(error=PAIR_NOT_SENT)


def sequential_pairs_resend() -> list[int]:
    """Send again the pending pairs whose task could not be sent; return their ids. Run by
    beat's watchdog: a pending pair is sent again on this evidence only, never for its
    time in the queue."""
    with transaction.atomic():
        lost = list(
            SequentialPair.objects.select_for_update()
            .filter(status=SequentialPair.Status.PENDING, error=PAIR_NOT_SENT)
            .values_list("pk", flat=True)
        )
        SequentialPair.objects.filter(pk__in=lost).update(error="")
        if lost:
            after_commit(lambda: _send_pairs(lost))
    return lost


def sequential_test_matches(test: SequentialTest) -> list[int]:
    """The ids of the test's matches, in the order they were played."""
    return sequential_tests_matches([test.pk]).get(test.pk, [])


def sequential_tests_matches(test_ids: list[int]) -> dict[int, list[int]]:
    """The ids of each test's matches, in the order they were played, in one query (a
    list of tests must not query once per test)."""
    ids: dict[int, list[int]] = {}
    pairs = (
        SequentialPair.objects.filter(test_id__in=test_ids).order_by("test_id", "index")
        .values_list("test_id", "first_id", "second_id")
    )  # fmt: skip
    for test_id, first, second in pairs:
        ids.setdefault(test_id, []).extend(m for m in (first, second) if m is not None)
    return ids


def sequential_test_summary(test: SequentialTest) -> dict:
    """The test's statistic as the API and the page show it."""
    low, high = sprt.llr_bounds(test.alpha, test.beta)
    estimate = sprt.estimate(test.counts)
    return {
        "counts": test.counts,
        "pairs": test.pairs_done,
        "games": 2 * test.pairs_done,
        "llr": test.llr,
        "llr_lower": low,
        "llr_upper": high,
        "elo": estimate.elo if estimate.pairs else None,
        "elo_low": estimate.elo_low if estimate.pairs else None,
        "elo_high": estimate.elo_high if estimate.pairs else None,
        "nelo": estimate.nelo if estimate.pairs else None,
        "los": estimate.los,
    }
