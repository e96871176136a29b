"""The games app: Durak and Volynshchik in the server.

The rules themselves live in the pure-Python subpackage ``cardkit.engine``, which must stay
importable without Django, so this module imports nothing.
"""
