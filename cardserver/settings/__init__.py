"""Django settings of the card arena (``DJANGO_SETTINGS_MODULE=cardserver.settings``).

Every value that differs between machines comes from an environment variable; README.md
lists them. With no variables set, the project runs as a self-contained development
setup: DEBUG on, SQLite and an embedded Celery broker, both kept under ``var/``.

One module per concern, all composed here: a module that needs a value of another
imports it from there by name, so the order below does not matter, and a setting is
defined in one module only (tests/test_settings.py checks it). The readers of
environment variables are in ``cardserver.settings.env``.
"""

from cardserver.settings.api import *
from cardserver.settings.base import *
from cardserver.settings.bots import *
from cardserver.settings.live import *
from cardserver.settings.queues import *
from cardserver.settings.tournaments import *
