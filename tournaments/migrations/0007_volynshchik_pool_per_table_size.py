"""Volynshchik gets a pool per table size (``volynshchik-2p`` ... ``volynshchik-5p``).

The one ``volynshchik`` pool's history is moved honestly: each rated match goes to the
pool of its table size, keeping the order in which it was applied; every Elo change is
replayed from 1500 within the new pool (with today's ``RATING_ELO_K``), the ratings are
rebuilt from the replay, and each new pool is fitted afresh (the fits of the mixed pool
rated different games at once, so they are dropped). Reversed, the pools merge back the
same way.
"""

from collections import defaultdict

from django.conf import settings
from django.db import migrations
from django.db.models import F

from cardkit.stats import elo
from cardkit.stats.bradley_terry import fit_ratings

OLD = "volynshchik"


def per_table_size(players: int) -> str:
    return f"{OLD}-{players}p"


def one_pool(players: int) -> str:
    return OLD


def regroup(apps, pool_of, targets: list[str]) -> None:
    """Move every Volynshchik rated match to ``pool_of(players)``, replaying Elo and fits.

    ``targets`` are the pools that exist afterwards (each gets its row).
    """
    Bot = apps.get_model("bots", "Bot")
    RatedMatch = apps.get_model("tournaments", "RatedMatch")
    RatingChange = apps.get_model("tournaments", "RatingChange")
    Rating = apps.get_model("tournaments", "Rating")
    RatingPool = apps.get_model("tournaments", "RatingPool")
    RatingFit = apps.get_model("tournaments", "RatingFit")
    FitEntry = apps.get_model("tournaments", "FitEntry")
    LadderMatch = apps.get_model("tournaments", "LadderMatch")

    old_pools = [key for key in RatingPool.objects.values_list("key", flat=True)
                 if key == OLD or key.startswith(f"{OLD}-")]  # fmt: skip
    # One pool's ledger keeps its order; pools merged back interleave as the matches
    # finished (the order in which the ledger applies a pool's matches).
    order = ["sequence"] if len(old_pools) == 1 else ["match__finished_at", "match_id"]
    ledger = list(
        RatedMatch.objects.filter(pool__in=old_pools).select_related("match").order_by(*order)
    )
    changes = defaultdict(list)
    for change in RatingChange.objects.filter(pool__in=old_pools).order_by("seat"):
        changes[change.match_id].append(change)
    sequences: dict[str, int] = defaultdict(int)
    current: dict[tuple[str, int], list] = {}
    results: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for entry in ledger:
        pool = pool_of(entry.match.players)
        sequences[pool] += 1
        entry.pool, entry.sequence = pool, sequences[pool]
        rows = changes.get(entry.match_id, [])
        if not rows:
            continue  # a table that was never rated (a person's seat, a bot twice)
        loser = entry.match.loser
        lines = [current.setdefault((pool, row.bot_id), [elo.INITIAL_RATING, 0, 0, 0])
                 for row in rows]  # fmt: skip
        after = elo.elo_update([line[0] for line in lines], loser, k=settings.RATING_ELO_K)
        for seat, (row, line) in enumerate(zip(rows, lines, strict=True)):
            row.pool, row.sequence = pool, entry.sequence
            row.before, row.after = line[0], after[seat]
            line[0] = after[seat]
            line[1] += 1
            line[2] += seat == loser
            line[3] += loser is None
        results[pool][0].append([row.bot_id for row in rows])
        results[pool][1].append(loser)

    # Free the (pool, sequence) pairs first: the new pools reuse numbers of the old ones.
    for number, key in enumerate(old_pools, start=1):
        RatedMatch.objects.filter(pool=key).update(
            pool="moving", sequence=F("sequence") + number * 100_000_000
        )
    for entry in ledger:
        RatedMatch.objects.filter(pk=entry.pk).update(pool=entry.pool, sequence=entry.sequence)
    RatingChange.objects.bulk_update(
        [row for rows in changes.values() for row in rows],
        ["pool", "sequence", "before", "after"],
        batch_size=1000,
    )
    Rating.objects.filter(pool__in=old_pools).delete()
    Rating.objects.bulk_create(
        Rating(pool=pool, bot_id=bot_id, elo=line[0], games=line[1], losses=line[2],
               draws=line[3])
        for (pool, bot_id), line in current.items()
    )  # fmt: skip
    RatingPool.objects.filter(key__in=old_pools).delete()
    for pool in targets:
        RatingPool.objects.create(key=pool, matches_applied=sequences.get(pool, 0))
    for ladder in LadderMatch.objects.filter(pool__in=old_pools).select_related("match"):
        LadderMatch.objects.filter(pk=ladder.pk).update(pool=pool_of(ladder.match.players))

    RatingFit.objects.filter(pool__in=old_pools).delete()
    anchor = Bot.objects.filter(name=settings.RATING_ANCHOR_BOT).first()
    for pool, (tables, losers) in results.items():
        entries = fit_ratings(
            tables, losers, anchor=anchor.pk if anchor else None,
            anchor_rating=settings.RATING_ANCHOR, bootstraps=settings.RATING_BOOTSTRAPS,
            seed=sequences[pool],
        )  # fmt: skip
        fit = RatingFit.objects.create(
            pool=pool, matches=len(tables), through_sequence=sequences[pool],
            bootstraps=settings.RATING_BOOTSTRAPS, anchor=anchor,
            anchor_rating=settings.RATING_ANCHOR,
        )  # fmt: skip
        FitEntry.objects.bulk_create(
            FitEntry(fit=fit, bot_id=e.player, rank=rank, rating=e.rating, low=e.low,
                     high=e.high, los=e.los, games=e.games, losses=e.losses,
                     provisional=e.high - e.low > settings.RATING_PROVISIONAL_WIDTH)
            for rank, e in enumerate(entries, start=1)
        )  # fmt: skip


def forward(apps, schema_editor):
    regroup(apps, per_table_size, [per_table_size(n) for n in range(2, 6)])


def backward(apps, schema_editor):
    regroup(apps, one_pool, [OLD])


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0001_initial"),
        ("games", "0004_match_rating_applied"),
        ("tournaments", "0006_ladder_duplicate_tables"),
    ]

    operations = [migrations.RunPython(forward, backward)]
