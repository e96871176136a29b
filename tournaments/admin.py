"""Admin registrations of the tournaments app (none yet)."""
