"""Errors of the match services: what went wrong in domain terms, with no HTTP in them.

The API layer (``games.view_helpers``) maps each one to a status and the error body of
``cardserver.api_errors``; ``code`` is the stable string that body carries.
"""

from __future__ import annotations


class MatchError(Exception):
    """Base class: an action on a match that cannot be done as asked."""

    code = "match_error"
    message = "The action cannot be done."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.message)

    @property
    def detail(self) -> dict | None:
        """Return the machine-readable facts a client needs to recover, or None."""
        return None


class NotYourSeat(MatchError):
    code = "not_your_seat"
    message = "You do not hold that seat in this match."


class _AtPly(MatchError):
    def __init__(self, current_ply: int, to_move: int | None = None, message: str | None = None):
        super().__init__(message)
        self.current_ply = current_ply
        self.to_move = to_move

    @property
    def detail(self) -> dict:
        return {"current_ply": self.current_ply, "to_move": self.to_move}


class NotYourTurn(_AtPly):
    code = "not_your_turn"
    message = "It is not your seat's turn to move."


class StalePly(_AtPly):
    code = "stale_ply"
    message = "The ply sent is not the match's current ply; read the match and answer that ply."


class MatchNotActive(_AtPly):
    code = "match_not_active"
    message = "The match is not in play."

    def __init__(self, status: str, current_ply: int, message: str | None = None) -> None:
        super().__init__(current_ply, None, message or f"The match is {status}, not in play.")
        self.status = status

    @property
    def detail(self) -> dict:
        return {"status": self.status, "current_ply": self.current_ply}


class IllegalMoveError(MatchError):
    """A move the engine refused; the message names the rule it breaks."""

    code = "illegal_move"

    def __init__(self, message: str, *, unreadable: bool = False) -> None:
        super().__init__(message)
        if unreadable:
            self.code = "invalid_move"


class IdempotencyKeyReused(MatchError):
    code = "idempotency_key_reused"
    message = (
        "This Idempotency-Key was already used in this match for a different move or ply; "
        "send a new key for a new move."
    )


class MatchNotWaiting(MatchError):
    code = "match_not_waiting"
    message = "The match is no longer waiting for players."


class SeatTaken(MatchError):
    code = "seat_taken"
    message = "That seat is already held."


class AlreadySeated(MatchError):
    code = "already_seated"
    message = "You already hold a seat in this rated match; a rated match needs one seat each."


class MatchNotFinished(MatchError):
    code = "match_not_finished"
    message = "The match is not finished; its seed stays secret until it ends."


class MatchSealed(MatchError):
    code = "match_sealed"
    message = (
        "The match is sealed: its deck is dealt again in matches still to end, so its cards, "
        "seed and log stay hidden until they have (docs/fairness.md)."
    )


class NotMatchCreator(MatchError):
    code = "not_match_creator"
    message = "Only the match's creator may do this."


class InvalidMatchRequest(MatchError):
    """Options, seats or decks that do not make a match (answered as a 400)."""

    code = "invalid"
    message = "The request does not describe a valid match."


class MatchNotStarted(MatchError):
    code = "match_not_started"
    message = "The match has not started: there is nothing to replay yet."


class TooManyOpenMatches(MatchError):
    """The requester (or its bot) already has as many open matches as it may."""

    code = "too_many_open_matches"

    def __init__(self, holder: str, open_matches: int, limit: int) -> None:
        super().__init__(
            f"{holder} already has {open_matches} open (waiting or active) matches, the most "
            f"allowed ({limit}); finish or cancel some first."
        )
        self.open_matches = open_matches
        self.limit = limit

    @property
    def detail(self) -> dict:
        return {"open_matches": self.open_matches, "limit": self.limit}
