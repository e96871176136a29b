"""Actions on tournaments.

Each action is a function named ``<entity>_<action>`` with keyword-only, typed
arguments, and runs as one transaction. None exist yet.
"""
