"""The bots app: the bots that play in the arena."""
