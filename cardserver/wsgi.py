"""WSGI entry point, e.g. for ``gunicorn cardserver.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

application = get_wsgi_application()
