"""Deal groups: several matches dealt from one secret seed, sealed until the last ends.

A deck dealt more than once (a ladder table's rotations, a duplicate tournament's round,
a sequential test's pair) would show its cards to the matches still playing it if a
finished match of it could be read. So every match of a group is sealed
(``Match.sealed``): ``games.reading`` decides what may be read of it. The group unseals
when ``size`` of its matches have ended, or, once abandoned (a forfeit ended a table, a
test or tournament was cancelled), when every match it dealt has ended; then its seed is
revealed and each match can be verified (``cardkit.fairness``).

Settling runs after the commit that ended a match (``games.events``, subscribed in
``GamesConfig.ready``) and again from ``deal_groups_settle``, which beat's ladder tick
calls, so a group whose last settle was lost (a process that died after its commit)
still unseals.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from cardkit.fairness import new_seed, seed_commitment
from games.events import Change, MatchChanged
from games.models import DealGroup, Match

ENDED = (Match.Status.FINISHED, Match.Status.ABORTED)


@dataclass(frozen=True)
class GroupDeal:
    """Where a match sits in its group: deck ``number`` of the group, match ``copy``."""

    group: DealGroup
    number: int
    copy: int


def deal_group_create(*, kind: str, key: str, size: int) -> DealGroup:
    """Create a sealed group with a fresh secret seed, or return the one ``key`` names.

    ``size`` is the number of matches the group deals when it is complete. Two callers
    that create one group at once (the matches of a tournament round) get the same row.
    """
    seed = new_seed()
    group, _ = DealGroup.objects.get_or_create(
        key=key,
        defaults={"kind": kind, "seed": seed, "commitment": seed_commitment(seed), "size": size},
    )
    return group


def deal_group_abandon(*, group_id: int) -> bool:
    """Say that the group deals no more matches; return whether it unsealed now.

    It unseals as soon as every match it dealt has ended (at once if they all have).
    """
    with transaction.atomic():
        updated = DealGroup.objects.filter(pk=group_id, abandoned=False).update(abandoned=True)
        if not updated and not DealGroup.objects.filter(pk=group_id).exists():
            return False
        return _settle(group_id)


def deal_groups_abandon(*, key_prefix: str) -> None:
    """Abandon every group whose key starts with ``key_prefix`` (an owner's groups)."""
    groups = DealGroup.objects.filter(key__startswith=key_prefix, abandoned=False)
    for group_id in groups.values_list("pk", flat=True):
        deal_group_abandon(group_id=group_id)


def deal_group_of(key: str) -> int | None:
    """Return the id of the group ``key`` names, or None."""
    return DealGroup.objects.filter(key=key).values_list("pk", flat=True).first()


def deal_group_shrink(*, group_id: int, by: int) -> bool:
    """Say that the group deals ``by`` fewer matches than planned (a sequential test's pair
    that failed before dealing them); return whether it unsealed now."""
    with transaction.atomic():
        group = DealGroup.objects.select_for_update().filter(pk=group_id).first()
        if group is None:
            return False
        group.size = max(group.size - by, 0)
        group.save(update_fields=["size"])
        return _settle(group_id)


def deal_group_settle(*, group_id: int) -> bool:
    """Unseal the group if it is complete and every match it dealt has ended.

    Return whether the group is unsealed (now or before).
    """
    with transaction.atomic():
        return _settle(group_id)


def deal_groups_settle() -> list[int]:
    """Settle every sealed group; return the ids of those that unsealed."""
    sealed = DealGroup.objects.filter(unsealed_at__isnull=True).values_list("pk", flat=True)
    return [group_id for group_id in list(sealed) if deal_group_settle(group_id=group_id)]


def _settle(group_id: int) -> bool:
    """Should run inside a transaction: takes the group row's lock, so that of two matches
    of one group ending at once, the second to settle sees the first one ended."""
    group = DealGroup.objects.select_for_update().filter(pk=group_id).first()
    if group is None:
        return False
    if group.unsealed_at is not None:
        return True
    matches = Match.objects.filter(deal_group_id=group_id)
    dealt = matches.count()
    ended = matches.filter(status__in=ENDED).count()
    if ended < dealt or not (group.abandoned or ended >= group.size):
        return False
    now = timezone.now()
    group.unsealed_at = now
    group.save(update_fields=["unsealed_at"])
    # The seed of each match is now revealed with the group's.
    matches.update(sealed=False, seed_revealed=True)
    return True


def settle_on_end(event: MatchChanged) -> None:
    """Handler of ``games.events``: settle the group of a match that has just ended."""
    if event.change not in (Change.FINISHED, Change.ABORTED):
        return
    group_id = Match.objects.filter(pk=event.match_id).values_list("deal_group_id", flat=True)
    group_id = group_id.first()
    if group_id is not None:
        deal_group_settle(group_id=group_id)
