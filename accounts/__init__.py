"""Accounts: signing up and API tokens."""
