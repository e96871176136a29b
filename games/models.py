"""Models of the games app (none yet)."""
