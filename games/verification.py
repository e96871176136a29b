"""Verification of a finished, unsealed match: its commitment, its log replayed on the
decks its seed gives, and its result, each check said as a reader recomputes it
(docs/fairness.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cardkit.engine import IllegalMove
from cardkit.fairness import (
    commitment_matches,
    deal_seed,
    group_match_commitment,
    seed_commitment,
)
from games.models import DealGroup, Match
from games.selectors import (
    ENGINE_END_REASONS,
    match_decks,
    match_log,
    match_states,
    state_end_reason,
    states_last,
)


@dataclass
class Verification:
    """What ``match_verification`` found; ``ok`` when every check passed."""

    match_id: int
    kind: str
    seed: str
    commitment: str
    decks: list[list[str]]
    commitment_ok: bool
    replay_ok: bool
    result_ok: bool
    moves: int
    checks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    group_seed: str | None = None
    group_commitment: str | None = None
    deal_number: int | None = None
    deal_copy: int | None = None

    @property
    def ok(self) -> bool:
        return self.commitment_ok and self.replay_ok and self.result_ok


def match_verification(match: Match) -> Verification:
    """Recompute a finished, unsealed match from its revealed seed (or decks) and its log.

    Check the commitment (``match_commitment_checks``), that the log replays legally on
    the decks the seed gives, and that the replay ends in the stored result (for a forfeit:
    that the replay is still in play, with the forfeiting seat among the players).
    """
    kind, checks, commitment_ok, group = match_commitment_checks(match)
    problems: list[str] = []
    if not commitment_ok:
        problems.append(f"the commitment check failed: {checks[0]}")
    moves = match_log(match)
    state = None
    replay_ok = True
    try:
        state = states_last(match_states(match, moves))
    except (IllegalMove, ValueError) as exc:
        replay_ok = False
        problems.append(f"the log does not replay on the committed decks: {exc}")
    result_ok = False
    decks: list[list[str]] = []
    if state is not None and replay_ok:
        decks = match_decks(match, final_state=state)
        if match.end_reason in ENGINE_END_REASONS:
            result_ok = (
                state.is_over
                and state.result == match.result
                and state_end_reason(state) == match.end_reason
            )
            if not result_ok:
                problems.append("the replay does not end in the stored result")
        else:
            result_ok = (
                not state.is_over
                and match.forfeit_seat is not None
                and match.loser == match.forfeit_seat
            )
            if not result_ok:
                problems.append("the forfeit does not fit the replayed log")
    checks.append(f"the log of {len(moves)} moves replays legally on the decks shown")
    checks.append("the replay ends in the stored result (a forfeit: the seat forfeited in play)")
    return Verification(
        match_id=match.pk,
        kind=kind,
        checks=checks,
        group_seed=group.seed if group else None,
        group_commitment=group.commitment if group else None,
        deal_number=match.deal_number if group else None,
        deal_copy=match.deal_copy if group else None,
        seed=match.seed,
        commitment=match.seed_commitment,
        decks=decks,
        commitment_ok=commitment_ok,
        replay_ok=replay_ok,
        result_ok=result_ok,
        moves=len(moves),
        problems=problems,
    )


def match_commitment_checks(match: Match) -> tuple[str, list[str], bool, DealGroup | None]:
    """Return the match's kind, what its commitment check states, whether it holds, and
    its deal group: the checks are said as a reader recomputes them (docs/fairness.md)."""
    group = match.deal_group if match.deal_group_id else None
    if group is not None:
        n, k = match.deal_number, match.deal_copy
        expected = group_match_commitment(group.seed, n, k)
        ok = (
            expected == match.seed_commitment
            and deal_seed(group.seed, n) == match.seed
            and seed_commitment(group.seed) == group.commitment
        )
        checks = [
            f'sha256("cardserver-group:{{group_seed}}:{n}:{k}") equals the commitment this '
            "match published when it started",
            f'the seed is sha256("cardserver-deal:{{group_seed}}:{n}"), deck {n} of the group',
            "sha256(group_seed) equals the group's commitment",
        ]
        return "group", checks, ok, group
    if match.decks is not None:
        ok = commitment_matches(match.seed_commitment, decks=match.decks)
        checks = [
            "sha256 of the decks as compact JSON equals the commitment published at the start "
            "(explicit decks chosen by the match's creator: not random)"
        ]
        return "explicit", checks, ok, None
    ok = commitment_matches(match.seed_commitment, seed=match.seed)
    checks = ["sha256(seed) equals the commitment published when the match started"]
    return "seeded", checks, ok, None
