"""``cardkit sprt``: the server's sequential test on paired deals of the local arena."""

from __future__ import annotations

import pytest

from cardkit.cli import main
from cardkit.specs import BuiltinPlayer, load_player
from cardkit.sprt import SprtBounds, pair_deals, sprt_run
from cardkit.stats import sprt

# A bot whose choices are its own random draws (not the arena's seeded ones), so that the
# two games of a pair differ and a bot against itself gives a noisy, even test.
NOISY = "import random\n_rng = random.Random(7)\n\ndef choose(view, legal_moves):\n" \
    "    return _rng.choice(legal_moves)\n"


def test_a_head_to_head_pair_is_one_deck_twice_with_the_seats_swapped():
    candidate, baseline = BuiltinPlayer("greedy"), BuiltinPlayer("random")

    outcome, first, second = pair_deals(
        "durak", {}, candidate, baseline, None, pair=3, seed="s", time_limit=5.0
    )

    assert first.seed == second.seed
    assert (first.seating, second.seating) == ((0, 1), (1, 0))
    scores = [sprt.game_score(first.result["loser"], 0), sprt.game_score(second.result["loser"], 1)]
    assert outcome == round(2 * sum(scores))


def test_a_reference_pair_puts_candidate_then_baseline_in_one_seat_of_one_deck():
    players = [BuiltinPlayer(name) for name in ("greedy", "random", "greedy")]

    _, first, second = pair_deals(
        "durak", {"players": 3}, *players, pair=4, seed="s", time_limit=5.0
    )

    # Pair 4 of a 3-seat table: deck 1, seat 1.
    assert first.seed == second.seed
    assert (first.seating, second.seating) == ((2, 0, 2), (2, 1, 2))


def test_greedy_against_random_accepts_h1(capsys):
    arguments = ["--candidate", "greedy", "--baseline", "random", "--max-pairs", "200"]

    assert main(["sprt", *arguments]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "H1 accepted: greedy is better than random (by 20 normalized Elo or more)"
    pairs = int(lines[1].split()[1])
    assert pairs < 200
    assert lines[2].startswith("Elo +")


def test_a_bot_against_itself_does_not_accept_h1_within_the_cap(tmp_path):
    (tmp_path / "noisy.py").write_text(NOISY)
    spec = f"{tmp_path / 'noisy.py'}:choose"
    candidate, baseline = load_player(spec), load_player(spec)

    states = list(sprt_run(
        "durak", {}, candidate, baseline, bounds=SprtBounds(), max_pairs=150, seed="self"
    ))

    assert states[-1].decision != "H1"
    # The games of a pair differ: the test sees wins and losses, not only split pairs.
    assert states[-1].counts[0] > 0 and states[-1].counts[4] > 0


def test_the_test_stops_at_the_first_pair_whose_llr_crosses_a_bound():
    states = [
        (state.pairs, state.llr, state.decision)
        for state in sprt_run(
            "durak", {}, BuiltinPlayer("greedy"), BuiltinPlayer("random"),
            bounds=SprtBounds(elo1=20, alpha=0.2, beta=0.2), max_pairs=100,
        )
    ]  # fmt: skip

    low, high = sprt.llr_bounds(0.2, 0.2)
    assert all(low < llr < high for _, llr, _ in states[:-1])
    assert states[-1][1] >= high and states[-1][2] == "H1"
    assert [pairs for pairs, _, _ in states] == list(range(1, len(states) + 1))


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--elo0", "10", "--elo1", "5"], "elo1 (5.0) must be above elo0 (10.0)"),
        (["--alpha", "0.7"], "alpha must lie between 0 and 0.5"),
        (["--max-pairs", "0"], "--max-pairs must be at least 1"),
    ],
)
def test_bad_bounds_are_a_usage_error_that_names_the_rule(arguments, message, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["sprt", "--candidate", "greedy", "--baseline", "random", *arguments])

    assert exited.value.code == 2
    assert message in capsys.readouterr().err
