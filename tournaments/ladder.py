"""The ladder: rated tables started among healthy, enabled bots, round the clock.

Beat runs ``ladder_tick``, which chooses tables by information (``tournaments.pairing``:
the bots whose order the results leave least certain, with a floor of exploration) and
deals each table's first deal. A table is duplicate: one deck, dealt once in each seat
rotation of its bots, so every bot holds every hand and most of the deck's luck cancels;
the fit links the rotations. Each deal is a task of its own (``ladder_match_play``): when
a deal is recorded, in its task or, for HTTP bots, when the I/O pool finishes it, the
next rotation is dealt and its task sent. A bot that keeps forfeiting is paused.
"""

from __future__ import annotations

import random
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from bots.models import Bot
from bots.notices import bot_pause_notify
from bots.play_to_end import match_play_to_end
from cardkit.stats import elo
from games.match_endings import match_abort
from games.models import DealGroup, Match, Seat
from games.sealing import GroupDeal, deal_group_abandon, deal_group_create, deal_groups_settle
from games.seating import SeatHolder
from tournaments.dispatch import TASKS, after_commit
from tournaments.models import LadderMatch, LadderPause
from tournaments.pairing import Candidate, informative_table, seat_rotations
from tournaments.pools import pool_of
from tournaments.ratings import ratings_apply_match


def ladder_tick(*, tables_per_pool: int | None = None, seed: int | None = None) -> list[int]:
    """Start rated ladder tables among healthy, enabled bots; return their first matches.

    For each table shape in ``LADDER_TABLES`` start up to ``LADDER_TABLES_PER_TICK``
    tables while fewer than ``LADDER_MAX_ACTIVE`` ladder matches are unfinished (see
    ``ladder_plan``). ``seed`` makes the choice of tables and seats repeatable; without
    it the tick draws a seed of its own. First it deals on the tables that a lost record
    left half dealt (``ladder_tables_resume``), and unseals the deal groups whose last
    settle was lost (``games.sealing.deal_groups_settle``).
    """
    deal_groups_settle()
    ladder_tables_resume()
    rng = random.Random(secrets.randbits(64) if seed is None else seed)
    created = []
    for game, players, table in ladder_plan(rng=rng, tables_per_pool=tables_per_pool):
        order = list(table)
        rng.shuffle(order)
        group = deal_group_create(
            kind=DealGroup.Kind.LADDER, key=f"ladder:{secrets.token_hex(8)}", size=players
        )
        created.append(_ladder_match_create(game, players, order, group=group))
    return created


# How many of the newest ladder deals the tick looks through for a table to deal on: far
# more than are ever in flight (``LADDER_MAX_ACTIVE``), and a read of the newest rows only.
RESUME_WINDOW = 500


def ladder_tables_resume() -> list[int]:
    """Record the finished deals whose table was not dealt on; return those deals.

    A deal's task, or the record task of a deal that HTTP bots finished on the I/O pool,
    deals the next rotation; when that record is lost (a task that never ran), the
    table would stop there. Among the newest ``RESUME_WINDOW`` ladder deals, a finished,
    unforfeited deal with rotations after it and none dealt is recorded again
    (``ladder_match_record``: once, whoever else does it).
    """
    resumed = list(_deals_awaiting_next().order_by("pk").values_list("match_id", flat=True))
    for match_id in resumed:
        ladder_match_record(match_id=match_id)
    return resumed


def _deals_awaiting_next() -> QuerySet[LadderMatch]:
    """The newest ``RESUME_WINDOW`` ladder deals that are finished and unforfeited, with
    rotations after them and none dealt yet: their tables go on at the next deal."""
    newest = LadderMatch.objects.order_by("-pk").values("pk")[RESUME_WINDOW - 1 : RESUME_WINDOW]
    dealt_on = LadderMatch.objects.filter(
        table=OuterRef("table"), rotation=OuterRef("rotation") + 1
    )
    return LadderMatch.objects.filter(
        pk__gte=Coalesce(Subquery(newest), 0),
        table__isnull=False,
        match__status=Match.Status.FINISHED,
        match__forfeit_seat=None,
        rotation__lt=F("match__players") - 1,
    ).exclude(Exists(dealt_on))


def ladder_plan(
    *, rng: random.Random, tables_per_pool: int | None = None
) -> list[tuple[str, int, list[Bot]]]:
    """Return the tables a tick would start, as (game, players, bots); start none.

    A bot plays one ladder table at a time, and no two bots of one owner sit at a table
    (built-in bots, which the arena itself runs, are exempt). A reading only: the same
    database and ``rng`` give the same tables. Its reads do not grow with the tables:
    the bots (the columns the choice needs), every pool's standings at once, and the
    chosen bots.
    """
    from tournaments.selectors import pools_standings

    if tables_per_pool is None:
        tables_per_pool = settings.LADDER_TABLES_PER_TICK
    unfinished = LadderMatch.objects.filter(
        match__status__in=[Match.Status.WAITING, Match.Status.ACTIVE]
    )
    active = unfinished.count()
    if active >= settings.LADDER_MAX_ACTIVE:
        return []
    # A table's bots stay busy between its deals too: from the moment a deal finishes to
    # the commit of the next rotation a tick must not seat them elsewhere, unless one of
    # them has left the ladder (then the table ends there). One statement, one snapshot:
    # read apart, a deal could finish after the first read and its next be dealt before
    # the second, and neither would see the table.
    leaving = Seat.objects.filter(match=OuterRef("match")).filter(
        Q(bot__enabled=False) | Q(bot__healthy=False) | Q(bot__ladder_pause__isnull=False)
    )
    between_deals = _deals_awaiting_next().exclude(Exists(leaving))
    busy = set(
        Seat.objects.filter(
            Q(match__ladder_entry__in=unfinished) | Q(match__ladder_entry__in=between_deals)
        ).values_list("bot_id", flat=True)
    )
    bots = list(
        Bot.objects.filter(enabled=True, healthy=True, ladder_pause=None)
        .exclude(kind=Bot.Kind.CLIENT)
        .order_by("pk")
        .values_list("pk", "owner_id", "kind", "games")
    )
    shapes = [(game, players) for game, players in settings.LADDER_TABLES]
    # The first shapes take the free bots and the active slots, so a fixed order would
    # starve the last ones whenever bots or slots are short (a soak with six bots never
    # dealt a 4- or 5-player table): each tick starts from a shape of its own draw.
    start = rng.randrange(len(shapes))
    shapes = shapes[start:] + shapes[:start]
    standings = pools_standings([pool_of(game, players) for game, players in shapes])
    chosen: list[tuple[str, int, list[int]]] = []
    for game, players in shapes:
        candidates = _ladder_candidates(game, bots, standings[pool_of(game, players)])
        for _ in range(tables_per_pool):
            if active >= settings.LADDER_MAX_ACTIVE:
                break
            free = [candidate for candidate in candidates if candidate.key not in busy]
            table = informative_table(free, players, rng) if len(free) >= players else None
            if table is None:
                break
            chosen.append((game, players, [candidate.key for candidate in table]))
            busy.update(candidate.key for candidate in table)
            active += 1
    seated = Bot.objects.in_bulk([pk for _, _, keys in chosen for pk in keys])
    return [(game, players, [seated[pk] for pk in keys]) for game, players, keys in chosen]


def _ladder_candidates(game: str, bots: list[tuple], standings: dict) -> list[Candidate]:
    """Return the bots that play ``game`` as the pairing's candidates, with their standing
    in the pool (a bot never rated there stands at the initial Elo, unfitted)."""
    candidates = []
    for pk, owner_id, kind, games in bots:
        if game not in (games or []):
            continue
        standing = standings.get(pk)
        builtin = kind == Bot.Kind.BUILTIN
        if standing is None:
            candidates.append(
                Candidate(key=pk, owner=owner_id, builtin=builtin,
                          rating=elo.INITIAL_RATING, games=0)
            )  # fmt: skip
            continue
        fitted = standing.rating is not None
        candidates.append(
            Candidate(
                key=pk, owner=owner_id, builtin=builtin,
                rating=standing.rating if fitted else standing.elo, games=standing.games,
                low=standing.low, high=standing.high, los=standing.los, below=standing.below,
            )
        )  # fmt: skip
    return candidates


def _ladder_match_create(
    game: str,
    players: int,
    order: list[Bot],
    *,
    group: DealGroup,
    table: int | None = None,
    rotation: int = 0,
) -> int:
    """Create one deal of a ladder table (seats in ``order``) and send its task after commit.

    Each deal is a task of its own (``play_ladder_match``), sent when the deal before it
    is recorded: a failed or slow deal costs its own task's time, not the table's. The
    table is a deal group (``games.sealing``): every rotation deals deck 0 of its seed and
    is sealed until the table's last deal ends.
    """
    from games.services import match_create

    deck_size = 36 if game == "durak" else 32
    with transaction.atomic():
        match = match_create(
            creator=None,
            game=game,
            players=players,
            deck_size=deck_size,
            format="deal",
            seats=[SeatHolder(bot=bot) for bot in order],
            move_time_limit=settings.BOTS_DEFAULT_MOVE_TIME_LIMIT,
            rated=True,
            notify=False,  # play_ladder_match plays it
            by_arena=True,
            deal=GroupDeal(group=group, number=0, copy=rotation),
        )
        LadderMatch.objects.create(
            match=match,
            pool=pool_of(game, players),
            table=match.pk if table is None else table,
            rotation=rotation,
        )
        match_id = match.pk

        def send() -> None:
            TASKS.play_ladder_match.delay(match_id)

        after_commit(send)
    return match_id


def ladder_match_play(*, match_id: int) -> str:
    """Play one deal of a ladder table to its end and record it; return its status.

    Recording a finished deal deals the table's next seat rotation (the same deck), which
    its own task plays (see ``ladder_match_record``). Each call counts an attempt; past
    ``TOURNAMENT_MAX_ATTEMPTS`` the deal is aborted (a deal whose play kills the worker
    does not come back for ever). Safe to call again: a finished deal is not replayed, a
    deal resumes from its move log, its rating applies once and the next deal is dealt
    once. Call it outside any transaction.
    """
    if not Match.objects.filter(pk=match_id, status=Match.Status.FINISHED).exists():
        with transaction.atomic():
            entry = LadderMatch.objects.select_for_update().filter(match_id=match_id).first()
            if entry is not None:
                entry.attempts += 1
                entry.save(update_fields=["attempts"])
                if entry.attempts > settings.TOURNAMENT_MAX_ATTEMPTS:
                    match_abort(
                        match_id=match_id,
                        code="arena",
                        detail=f"the arena gave up: the deal's task failed or its worker "
                        f"died {entry.attempts - 1} times; no bot is at fault",
                    )
        match_play_to_end(match_id=match_id, pool=True)
    return ladder_match_record(match_id=match_id)


def ladder_match_record(*, match_id: int) -> str:
    """Record a ladder deal that ended; return its status.

    A finished deal has its rating applied and a bot that keeps forfeiting paused; then
    the table's next rotation is dealt (``_ladder_next_deal``). Safe to call again: each
    happens once. A deal still in play (HTTP bots on the I/O pool) is recorded when it
    ends (``tournaments.tasks.record_ladder_match``), so its table goes on from there.
    """
    match = Match.objects.get(pk=match_id)
    if match.status == Match.Status.FINISHED:
        ratings_apply_match(match_id=match_id)
        if match.forfeit_seat is not None:
            ladder_forfeits_check(match_id=match_id)
        _ladder_next_deal(match_id)
    elif match.status == Match.Status.ABORTED and match.deal_group_id is not None:
        # An aborted deal ends its table: the group deals nothing more.
        deal_group_abandon(group_id=match.deal_group_id)
    return match.status


def _ladder_next_deal(match_id: int) -> int | None:
    """Deal the rotation after this finished deal of its table; return its id.

    None when there is none to deal: the deal is not its table's last (the next one is
    dealt already), the table is complete, or it ends early because the deal was
    forfeited or a bot of the table left the ladder (disabled, unhealthy, paused).
    """
    entry = LadderMatch.objects.filter(match_id=match_id).values_list("table", flat=True)
    table = entry.first()
    if table is None:
        return None
    with transaction.atomic():
        first = LadderMatch.objects.select_for_update().select_related("match").get(match_id=table)
        deals = list(
            LadderMatch.objects.filter(table=table).select_related("match").order_by("rotation")
        )
        last = deals[-1]
        if last.match_id != match_id or last.match.status != Match.Status.FINISHED:
            return None
        players = first.match.players
        group_id = first.match.deal_group_id
        order = list(Bot.objects.filter(seats__match_id=table).order_by("seats__index"))
        if (
            len(deals) >= players
            or last.match.forfeit_seat is not None
            or group_id is None  # a table dealt before deal groups: it ends here
            or len(order) != players
            or any(
                not bot.enabled or not bot.healthy or LadderPause.objects.filter(bot=bot).exists()
                for bot in order
            )
        ):
            # The table is complete or ends here: its group unseals once its deals ended.
            if group_id is not None:
                deal_group_abandon(group_id=group_id)
            return None
        rotation = len(deals)
        return _ladder_match_create(
            first.match.game,
            players,
            seat_rotations(order)[rotation],
            group=first.match.deal_group,
            table=table,
            rotation=rotation,
        )


def ladder_forfeits_check(*, match_id: int) -> LadderPause | None:
    """Pause the bot that forfeited this match if its last rated matches were all forfeits."""
    match = Match.objects.get(pk=match_id)
    seat = Seat.objects.filter(match_id=match_id, index=match.forfeit_seat).first()
    if seat is None or seat.bot_id is None:
        return None
    limit = settings.LADDER_PAUSE_AFTER_FORFEITS
    recent = list(
        Seat.objects.filter(
            bot_id=seat.bot_id, match__rated=True, match__status=Match.Status.FINISHED
        )
        .order_by("-match__finished_at", "-match_id")
        .values_list("index", "match__forfeit_seat")[:limit]
    )
    if len(recent) < limit or any(index != forfeit for index, forfeit in recent):
        return None
    with transaction.atomic():
        try:
            with transaction.atomic():
                pause = LadderPause.objects.create(
                    bot_id=seat.bot_id, reason=f"forfeited its last {limit} rated matches"
                )
                bot_pause_notify(bot_id=seat.bot_id, reason=f"off the ladder: {pause.reason}")
                return pause
        except IntegrityError:
            return LadderPause.objects.get(bot_id=seat.bot_id)
