"""Records kept as matches finish: head-to-head results and each version's results.

A bot's page and its head-to-head answers read these rows (``PairRecord``,
``VersionRecord``) instead of counting over the bot's whole history at every request.
``match_records_count`` adds a finished match to them once, in the transaction that
finishes it (``Match.records_counted`` is what makes it once, as the ratings ledger is
for ratings); ``records_rebuild`` recounts them from the archive of finished matches
(``manage.py rebuild_records``), and ``records_from_archive`` is that count, which the
tests compare the kept rows with.

A record counts *pairings*: one seat of the bot and one seat of the opponent at the same
finished match (``bots.headtohead`` says why). Only seats held by bots count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Q

from games.models import Match, PairRecord, Seat, VersionRecord

# Forfeit codes (``Match.end_reason`` of a forfeit) by what they say about the bot; any
# other code of a forfeit is a crash (a connection error, a bad HTTP status, ...).
TIMEOUTS = ("timeout",)
ILLEGAL = ("illegal_move", "malformed_response")
RESIGNED = ("resign",)
FORFEIT_KINDS = ("timeouts", "crashes", "illegal", "resigned")
PAIR_COUNTS = ("games", "wins", "losses", "draws", *FORFEIT_KINDS,
               "rated_games", "rated_wins", "rated_losses")  # fmt: skip
VERSION_COUNTS = ("games", "losses", "forfeits")

PairKey = tuple[int, int | None, int, str, int]  # bot, version, opponent, game, players
VersionKey = tuple[int, int | None]  # bot, version


def forfeit_kind(end_reason: str) -> str:
    """Return which of ``FORFEIT_KINDS`` a forfeit with this end reason is."""
    if end_reason in TIMEOUTS:
        return "timeouts"
    if end_reason in ILLEGAL:
        return "illegal"
    if end_reason in RESIGNED:
        return "resigned"
    return "crashes"


def match_tallies(
    match: Match, seats: Iterable[tuple[int, int, int | None]]
) -> tuple[dict[PairKey, Counter], dict[VersionKey, Counter]]:
    """Return what one finished match adds to the records, from its bots' seats
    ``(index, bot id, version id)``."""
    seats = list(seats)
    pairs: dict[PairKey, Counter] = {}
    versions: dict[VersionKey, Counter] = {}
    loser, forfeit = match.loser, match.forfeit_seat
    for index, bot_id, version_id in seats:
        line = versions.setdefault((bot_id, version_id), Counter())
        line["games"] += 1
        line["losses"] += loser == index
        line["forfeits"] += forfeit == index
        for other, opponent_id, _ in seats:
            if other == index:
                continue
            key = (bot_id, version_id, opponent_id, match.game, match.players)
            tally = pairs.setdefault(key, Counter())
            tally["games"] += 1
            tally["wins"] += loser == other
            tally["losses"] += loser == index
            tally["draws"] += loser is None
            if forfeit == index:
                tally[forfeit_kind(match.end_reason)] += 1
            if match.rated and loser is not None:
                tally["rated_games"] += 1
                tally["rated_wins"] += loser == other
                tally["rated_losses"] += loser == index
    return pairs, versions


def match_records_count(*, match: Match) -> bool:
    """Add a finished match to its bots' kept records, once; return whether it was added.

    Should be called inside the transaction that finishes the match, holding its row's
    lock, so that the records change with the result or not at all. A match counted
    already (or not finished) changes nothing.
    """
    if match.status != Match.Status.FINISHED:
        return False
    if not Match.objects.filter(pk=match.pk, records_counted=False).update(records_counted=True):
        return False
    match.records_counted = True
    seats = Seat.objects.filter(match_id=match.pk, bot__isnull=False).values_list(
        "index", "bot_id", "bot_version_id"
    )
    pairs, versions = match_tallies(match, seats)
    if match.forfeit_seat is not None:
        Seat.objects.filter(match_id=match.pk, index=match.forfeit_seat).update(forfeited=True)
    # In key order, so that two matches of the same bots finishing at once lock the rows
    # in the same order (no deadlock).
    for key in sorted(pairs, key=_sortable):
        bot_id, version_id, opponent_id, game, players = key
        _add(PairRecord, pairs[key], bot_id=bot_id, version_id=version_id,
             opponent_id=opponent_id, game=game, players=players)  # fmt: skip
    for key in sorted(versions, key=_sortable):
        _add(VersionRecord, versions[key], bot_id=key[0], version_id=key[1])
    return True


def _sortable(key: tuple) -> tuple:
    return tuple((value is not None, value) for value in key)


def _add(model, tally: Counter, **key) -> None:
    """Add ``tally`` to the row of ``key``, creating it if there is none.

    An update first (the usual case); an insert when it found nothing, in a savepoint, and
    the update again when another transaction inserted the row meanwhile.
    """
    changes = {name: F(name) + count for name, count in tally.items() if count}
    if not changes or model.objects.filter(**key).update(**changes):
        return
    try:
        with transaction.atomic():
            model.objects.create(**key, **{name: count for name, count in tally.items()})
    except IntegrityError:
        model.objects.filter(**key).update(**changes)


# --- Recounting from the archive --------------------------------------------------------


def records_from_archive(
    *, seats=Seat, pair_model=PairRecord, version_model=VersionRecord
) -> tuple[list, list]:
    """Count every finished match's records from the archive, in two queries; return the
    pair rows and the version rows (unsaved).

    The model arguments let a migration pass its historical models.
    """
    # A row is a pairing: a bot's seat (the row's) and another bot's seat at the same
    # finished match (``match__seats``, joined once: every condition on it is in the one
    # filter() call).
    pairings = seats.objects.filter(
        Q(match__seats__index__lt=F("index")) | Q(match__seats__index__gt=F("index")),
        bot__isnull=False, match__status=Match.Status.FINISHED,
        match__seats__bot__isnull=False,
    )  # fmt: skip
    own_forfeit = Q(match__forfeit_seat=F("index"))
    rated = Q(match__rated=True, match__loser__isnull=False)
    they_lost = Q(match__loser=F("match__seats__index"))
    i_lost = Q(match__loser=F("index"))
    pair_rows = (
        pairings.values("bot_id", "bot_version_id", "match__seats__bot_id", "match__game",
                        "match__players")  # fmt: skip
        .annotate(
            games=Count("pk"),
            wins=Count("pk", filter=they_lost),
            losses=Count("pk", filter=i_lost),
            draws=Count("pk", filter=Q(match__loser__isnull=True)),
            timeouts=Count("pk", filter=own_forfeit & Q(match__end_reason__in=TIMEOUTS)),
            illegal=Count("pk", filter=own_forfeit & Q(match__end_reason__in=ILLEGAL)),
            resigned=Count("pk", filter=own_forfeit & Q(match__end_reason__in=RESIGNED)),
            crashes=Count(
                "pk",
                filter=own_forfeit & ~Q(match__end_reason__in=TIMEOUTS + ILLEGAL + RESIGNED),
            ),
            rated_games=Count("pk", filter=rated),
            rated_wins=Count("pk", filter=rated & they_lost),
            rated_losses=Count("pk", filter=rated & i_lost),
        )
        .order_by()
    )
    pairs = [
        pair_model(
            bot_id=row.pop("bot_id"), version_id=row.pop("bot_version_id"),
            opponent_id=row.pop("match__seats__bot_id"), game=row.pop("match__game"),
            players=row.pop("match__players"), **row,
        )  # fmt: skip
        for row in pair_rows
    ]
    version_rows = (
        seats.objects.filter(bot__isnull=False, match__status=Match.Status.FINISHED)
        .values("bot_id", "bot_version_id")
        .annotate(
            games=Count("pk"),
            losses=Count("pk", filter=Q(match__loser=F("index"))),
            forfeits=Count("pk", filter=Q(match__forfeit_seat=F("index"))),
        )
        .order_by()
    )
    versions = [
        version_model(bot_id=row.pop("bot_id"), version_id=row.pop("bot_version_id"), **row)
        for row in version_rows
    ]
    return pairs, versions


def records_rebuild(
    *, matches=Match, seats=Seat, pair_model=PairRecord, version_model=VersionRecord
) -> tuple[int, int]:
    """Replace the kept records with a count over the archive, in one transaction; return
    the numbers of pair and version rows.

    On PostgreSQL the record tables are locked first: a match finishing meanwhile waits
    and adds itself once the rebuild has committed. Its match is not finished in what the
    rebuild reads, so it is counted once, by itself.
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                for model in (pair_model, version_model):
                    cursor.execute(f'LOCK TABLE "{model._meta.db_table}" IN EXCLUSIVE MODE')
        pairs, versions = records_from_archive(
            seats=seats, pair_model=pair_model, version_model=version_model
        )
        pair_model.objects.all().delete()
        version_model.objects.all().delete()
        pair_model.objects.bulk_create(pairs, batch_size=2000)
        version_model.objects.bulk_create(versions, batch_size=2000)
        matches.objects.filter(status=Match.Status.FINISHED, records_counted=False).update(
            records_counted=True
        )
        seats.objects.filter(
            match__status=Match.Status.FINISHED, match__forfeit_seat=F("index"), forfeited=False
        ).update(forfeited=True)
    return len(pairs), len(versions)


def records_differences() -> list[str]:
    """Return how the kept records differ from a count over the archive (none: equal).

    Rows of zero games count as missing, so a row kept with nothing in it is no error.
    """

    def table(rows, key_fields, counts) -> dict[tuple, tuple]:
        found = {}
        for row in rows:
            values = tuple(getattr(row, name) for name in counts)
            if any(values):
                found[tuple(getattr(row, name) for name in key_fields)] = values
        return found

    pair_key = ("bot_id", "version_id", "opponent_id", "game", "players")
    version_key = ("bot_id", "version_id")
    counted_pairs, counted_versions = records_from_archive()
    differences = []
    for name, kept, counted, counts in (
        ("pair", table(PairRecord.objects.all(), pair_key, PAIR_COUNTS),
         table(counted_pairs, pair_key, PAIR_COUNTS), PAIR_COUNTS),
        ("version", table(VersionRecord.objects.all(), version_key, VERSION_COUNTS),
         table(counted_versions, version_key, VERSION_COUNTS), VERSION_COUNTS),
    ):  # fmt: skip
        for key in sorted(kept.keys() | counted.keys(), key=_sortable):
            if kept.get(key) != counted.get(key):
                differences.append(
                    f"{name} {key}: kept {kept.get(key)}, counted {counted.get(key)} "
                    f"({', '.join(counts)})"
                )
    return differences
