"""The tournaments app: tournaments between bots and their standings."""
