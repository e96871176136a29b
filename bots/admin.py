"""Admin registrations of the bots app (none yet)."""
