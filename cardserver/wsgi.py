"""WSGI entry point, e.g. for ``gunicorn cardserver.wsgi``."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

application = get_wsgi_application()

# Import every view now rather than on the first request, then move the objects of the
# loaded project (some 150,000) out of the garbage collector's reach: they live as long
# as the process, and a full collection would otherwise walk them all, a pause of tens
# of milliseconds that whichever request set it off waits out.
get_resolver().url_patterns  # noqa: B018 - imports the URLconf and its views
gc.freeze()
