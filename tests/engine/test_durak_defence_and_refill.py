"""Durak rules 5-7: the defence and the cover relation, the refill, the next round.

Every expected value is worked out by hand from docs/rules.md (tests/engine/durak_deals.py).
"""

from __future__ import annotations

import pytest

from cardkit.engine import IllegalMove, InvalidMove
from tests.engine.durak_deals import (
    D2_R1,
    D4_R1,
    D4_R2,
    R2A_HANDS,
    TAKE,
    TAKE_KEY,
    attack,
    beat,
    d2,
    d4,
    d4_after_seat2_out,
    expected_beats,
    hand,
    moveset,
    norm,
    play,
    r2a,
)

# --- rule 5: defence and the cover relation ------------------------------------------


def test_rule5_defender_beats_or_takes_exact_choices():
    # Trump clubs. 7C needs 8C (the only higher trump), so 7D needs 8D;
    # 7S takes 8S or 9S, 7H takes 8H or 9H.
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    expected = {TAKE_KEY}
    for s in ("8S", "9S"):
        for h in ("8H", "9H"):
            expected.add(norm(beat("7S-" + s, "7H-" + h, "7D-8D", "7C-8C")))
    assert moveset(state.legal_moves()) == expected


def test_rule5_no_partial_defence():
    state = d2().play(attack("7S", "7H", "7D", "7C"))
    for move in state.legal_moves():
        if move["type"] == "beat":
            assert sorted(a for a, _ in move["covers"]) == sorted(["7S", "7H", "7D", "7C"])
    for bad in (beat("7S-8S"), beat("7S-8S", "7H-8H", "7D-8D"), beat()):
        with pytest.raises(IllegalMove, match=r"no partial defence.*\(Durak rule 5\)") as raised:
            state.play(bad)
        assert not isinstance(raised.value, InvalidMove)  # well-formed, against a rule


def test_rule5_each_covering_card_covers_exactly_one_attack_card():
    state = play(d4(), *D4_R1, attack("9S", "9H", "9D"))
    # Seat 2 holds TS TH TD JS JH JD, trump diamonds: 9D needs TD or JD, and the other
    # trump may then cover 9S or 9H in place of a card of their own suit.
    assert moveset(state.legal_moves()) == {TAKE_KEY} | expected_beats(
        ["9S", "9H", "9D"], ["TS", "TH", "TD", "JS", "JH", "JD"], "D")
    # Per choice for 9D: 2*2 plain covers, or the spare trump on 9S (2) or on 9H (2).
    assert len(state.legal_moves()) == 1 + 2 * (2 * 2 + 2 + 2)
    for bad in (beat("9S-TD", "9H-TD", "9D-JD"),            # one card covering two
                beat("9S-TS", "9H-TH", "9D-TD", "9D-JD"),   # two cards on one
                beat("9S-TS", "9S-JS", "9H-TH")):           # 9D left uncovered
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_trump_attack_card_needs_higher_trump():
    state = d2().play(attack("7C"))  # trump clubs; seat 1 holds 8C and no other club
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("7C-8C"))}
    for bad in (beat("7C-9S"), beat("7C-8H")):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_lower_trump_cannot_cover_higher_trump():
    # Trump hearts; seat 1 attacks 8H, seat 2 holds only 7H among hearts.
    state = r2a(opening="dealer_left").play(attack("8H"))
    assert state.to_move == 2
    assert moveset(state.legal_moves()) == {TAKE_KEY}
    with pytest.raises(IllegalMove):
        state.play(beat("8H-7H"))


def test_cover_by_higher_card_of_same_suit_or_by_trump():
    state = d2().play(attack("7S"))  # seat 1: 8S 8H 8D 8C 9S 9H, trump clubs
    assert moveset(state.legal_moves()) == {
        TAKE_KEY, norm(beat("7S-8S")), norm(beat("7S-9S")), norm(beat("7S-8C"))}


def test_cover_lower_card_of_same_suit_cannot_cover():
    state = d2().play(attack("TS"))
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("TS-8C"))}
    with pytest.raises(IllegalMove):
        state.play(beat("TS-9S"))


def test_cover_card_of_another_plain_suit_cannot_cover():
    state = d2().play(attack("TH"))
    assert moveset(state.legal_moves()) == {TAKE_KEY, norm(beat("TH-8C"))}
    for bad in (beat("TH-8S"), beat("TH-9H"), beat("TH-8D")):
        with pytest.raises(IllegalMove):
            state.play(bad)


def test_rule5_beaten_cards_go_to_the_public_discard():
    state = play(d2(), *D2_R1)
    for seat in (0, 1):
        view = state.view(seat)
        assert view["table"] == []
        assert sorted(view["discard"]) == sorted(["7S", "7H", "7D", "7C", "8S", "8H", "8D", "8C"])


def test_rule5_take_puts_every_attack_card_in_defenders_hand():
    state = play(d2(), attack("7S", "7H"), TAKE)
    assert hand(state, 1) == sorted(["8S", "8H", "8D", "8C", "9S", "9H", "7S", "7H"])
    assert state.view(0)["table"] == []
    assert state.view(0)["discard"] == []


def test_rule5_defender_may_take_when_he_could_beat():
    state = d2().play(attack("7S"))
    moves = moveset(state.legal_moves())
    assert norm(beat("7S-8S")) in moves and TAKE_KEY in moves
    state = state.play(TAKE)
    assert "7S" in hand(state, 1)


# --- rule 6: refill ------------------------------------------------------------------


def test_rule6_attacker_refills_first_defender_only_if_he_beat():
    # Both played four cards: seat 0 (attacker) draws TD TC JS JH, then seat 1 draws
    # the next four, 9D 9C QS QH.
    state = play(d2(), *D2_R1)
    assert hand(state, 0) == sorted(["TS", "TH", "TD", "TC", "JS", "JH"])
    assert hand(state, 1) == sorted(["9S", "9H", "9D", "9C", "QS", "QH"])
    assert state.view(0)["talon_size"] == 20 - 8


def test_rule6_defender_who_took_draws_nothing():
    state = play(d2(), attack("7S"), TAKE)
    assert hand(state, 0) == sorted(["7H", "7D", "7C", "TS", "TH", "TD"])
    assert hand(state, 1) == sorted(["8S", "8H", "8D", "8C", "9S", "9H", "7S"])
    assert state.view(1)["talon_size"] == 19


def test_rule6_player_holding_six_or_more_draws_nothing():
    # Seat 1 takes two cards (8 in hand), then beats one (7 left): he draws nothing,
    # while the attacker draws back up to six.
    state = play(d2(), attack("7S", "7H"), TAKE)
    assert hand(state, 0) == sorted(["7D", "7C", "TS", "TH", "TD", "TC"])
    state = play(state, attack("7D"), beat("7D-8D"))
    assert hand(state, 0) == sorted(["7C", "TS", "TH", "TD", "TC", "JS"])
    assert hand(state, 1) == sorted(["8S", "8H", "8C", "9S", "9H", "7S", "7H"])
    assert state.view(0)["talon_size"] == 20 - 3
    assert state.to_move == 1


def test_rule6_talon_runs_out_during_attackers_refill():
    # Three sevens beaten: seat 0 draws KD QC KC, seat 1 draws AC 9D AS; the talon
    # keeps AH and the trump AD. Then seat 1 plays three nines, seat 2 beats: seat 1
    # draws the last two (AH, then AD) and holds five; seat 2 draws nothing.
    state = play(d4(), attack("7S", "7H", "7D"), beat("7S-8S", "7H-8H", "7D-8D"))
    assert hand(state, 0) == sorted(["7C", "KS", "KH", "KD", "QC", "KC"])
    assert hand(state, 1) == sorted(["8C", "9S", "9H", "AC", "9D", "AS"])
    assert state.view(0)["talon_size"] == 2
    state = play(state, *D4_R2)
    assert hand(state, 1) == sorted(["8C", "AC", "AS", "AH", "AD"])
    assert hand(state, 2) == sorted(["JS", "JH", "JD"])
    assert state.view(0)["talon_size"] == 0
    assert state.view(0)["hand_sizes"] == [6, 5, 3, 6]


def test_rule6_only_attacker_and_defender_draw_attacker_first():
    # Seat 2 attacks 6D, seat 0 beats it with trump 9H: seat 2 draws QS (the talon's
    # top card), then seat 0 draws KS; seat 1 took no part and draws nothing.
    state = play(r2a(), attack("6D"), beat("6D-9H"))
    assert hand(state, 2) == sorted(["7H", "7D", "8D", "9D", "TD", "QS"])
    assert hand(state, 0) == sorted(["6S", "7S", "8S", "TS", "JS", "KS"])
    assert hand(state, 1) == sorted(R2A_HANDS[1])
    assert state.view(1)["talon_size"] == 18 - 2


# --- rule 7: next round --------------------------------------------------------------


def test_rule7_defender_who_beat_attacks_next():
    state = play(d2(), *D2_R1)
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 0)
    state = play(r2a(), attack("6D"), beat("6D-9H"))
    assert state.to_move == 0
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (0, 1)


def test_rule7_after_take_next_clockwise_after_defender_attacks():
    state = play(r2a(), attack("6D"), TAKE)  # seat 2 attacked seat 0, who took
    assert state.to_move == 1
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (1, 2)
    # Seat 2 drew the talon's top card; seat 0 drew nothing.
    assert hand(state, 2) == sorted(["7H", "7D", "8D", "9D", "TD", "QS"])
    assert hand(state, 0) == sorted(R2A_HANDS[0] + ["6D"])
    assert hand(state, 1) == sorted(R2A_HANDS[1])


def test_rule7_after_take_two_players_attacker_attacks_again():
    state = play(d2(), attack("7S"), TAKE)
    assert state.to_move == 0
    assert (state.view(1)["attacker"], state.view(1)["defender"]) == (0, 1)


def test_rule7_after_take_next_attacker_skips_seats_without_cards():
    # Seat 2 is out; seat 1 takes from seat 0, so seat 3 attacks seat 0.
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), TAKE)
    assert hand(state, 1) == sorted(["AS", "AH", "AD", "KS", "KH", "KD"])
    assert state.to_move == 3
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (3, 0)


def test_rule7_beat_with_last_cards_and_out_next_clockwise_in_deal_attacks():
    # Seat 1 beats with his last three cards and is out; seat 2 is already out, so
    # seat 3 attacks, and his left neighbour still in the deal is seat 0.
    state = play(d4_after_seat2_out(), attack("KS", "KH", "KD"), beat("KS-AS", "KH-AH", "KD-AD"))
    view = state.view(0)
    assert view["out_order"] == [2, 1]
    assert view["in_deal"] == [0, 3]
    assert state.to_move == 3
    assert (view["attacker"], view["defender"]) == (3, 0)
    assert not state.is_over


def test_rule7_defender_who_beat_attacks_after_attacker_went_out():
    # Seat 2 attacks with his last cards and seat 3 beats them: seat 2 is out and
    # seat 3 attacks seat 0.
    state = play(d4(), *D4_R1, *D4_R2, attack("JS", "JH", "JD"), beat("JS-QS", "JH-QH", "JD-QD"))
    assert state.view(0)["out_order"] == [2]
    assert state.to_move == 3
    assert (state.view(0)["attacker"], state.view(0)["defender"]) == (3, 0)
    assert hand(state, 3) == sorted(["9C", "TC", "JC"])
