"""A move's canonical form (cardkit.engine.moves): one key for every spelling of a move."""

from cardkit.engine import move_key, same_move


def test_same_move_ignores_the_order_of_a_set_of_cards():
    assert same_move(
        {"type": "attack", "cards": ["8S", "8D"]}, {"type": "attack", "cards": ["8D", "8S"]}
    )
    assert same_move(
        {"type": "beat", "covers": [["8S", "9S"], ["8D", "9D"]]},
        {"type": "beat", "covers": [["8D", "9D"], ["8S", "9S"]]},
    )
    assert not same_move(
        {"type": "beat", "covers": [["8S", "9S"]]}, {"type": "beat", "covers": [["9S", "8S"]]}
    )


def test_move_key_is_none_for_what_cannot_be_a_move():
    assert move_key(["attack", "8C"]) is None
    assert move_key("take") is None
    assert move_key({"type": "attack", "cards": ["8C", 8]}) is None
    assert not same_move("take", "take")
