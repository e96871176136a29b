"""Models of the tournaments app (none yet)."""
