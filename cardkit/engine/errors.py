"""The engine's two kinds of error, both ValueErrors (as in python-chess)."""


class IllegalMove(ValueError):
    """A move that breaks a rule of the game; the message names the rule."""


class InvalidMove(IllegalMove):
    """A move that cannot even be read: wrong shape, unknown type, not a card."""
