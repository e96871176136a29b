"""Models of the bots app (none yet)."""
