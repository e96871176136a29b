"""What may be read about a match, and by whom: the one rule every read path asks.

A match in play shows its seat holders their own seats' views and anyone else the
public view; a finished match shows everything (every hand, the decks, the seed, the
whole replay) so that it can be verified. A *sealed* match (one of a deal group that has
not unsealed: ``games.sealing``) shows nothing of its cards to anyone who is not playing
it: its deck is dealt again in another match of the group, so its public log, its
hands or its seed would show that match's cards. A sealed match reads as options, seats,
status, ply and, once over, its result; its seat holders keep their own views while it is
played. The admin follows the same rule: it hides a sealed match's seed, decks and
snapshot from staff too, since a staff member may play.
"""

from __future__ import annotations

from dataclasses import dataclass

from games.models import Match


@dataclass(frozen=True, slots=True)
class MatchReading:
    """What a reader may see of one match."""

    sealed: bool
    # The public view of the table and the public move log (spectators, the archive).
    public: bool
    # Everything: all hands, the decks, the seed, the complete replay, the verification.
    complete: bool

    def seat_view(self, status: str, seat: int | None) -> bool:
        """Whether the holder of ``seat`` may see its own view (None: a spectator)."""
        if seat is None:
            return self.public
        return status == Match.Status.ACTIVE or self.public


def match_reading(match: Match) -> MatchReading:
    """Return what anyone but staff in the admin may read of ``match``."""
    sealed = bool(match.sealed)
    return MatchReading(
        sealed=sealed,
        public=not sealed,
        complete=not sealed and match.status == Match.Status.FINISHED,
    )


def match_seed_revealed(match: Match) -> str | None:
    """Return the match's seed if it may be read (finished and unsealed), else None."""
    if match_reading(match).complete and match.seed_revealed and match.seed:
        return match.seed
    return None


def match_fairness(match: Match) -> dict:
    """Return what the match's fairness panel states: its kind, its commitment, its seed
    once it may be read, and one sentence on what the commitment proves. True for each
    kind (docs/fairness.md): nothing is said that was not done."""
    seed = match_seed_revealed(match)
    if match.deal_group_id is not None:
        kind = "group"
        note = (
            "Dealt from a deal group's secret seed (a deck dealt again, seats rotated, in "
            "other matches). This match published its commitment before its first card; "
            "the group's seed is revealed when the group's last match ends, and the verify "
            "page recomputes the commitment and the deck from it."
        )
    elif match.decks is not None:
        kind = "explicit"
        note = (
            "Practice match dealt from decks its creator chose, not shuffled: the "
            "commitment is the SHA-256 of those decks and proves only that they did not "
            "change during play."
        )
    else:
        kind = "seeded"
        note = (
            "The commitment, sha256(seed), was published before the first card was dealt; "
            "the seed is revealed when the match ends."
        )
    return {
        "kind": kind,
        "commitment": match.seed_commitment,
        "seed": seed,
        "sealed": match_reading(match).sealed,
        "note": note,
    }


def match_forfeit_reason(match: Match) -> str:
    """Return why the match was forfeited (or aborted) if it may be read: the reason of a
    sealed match may name cards of its deck ("8C cannot cover 9C"), so it stays hidden."""
    return match.forfeit_reason if match_reading(match).public else ""
