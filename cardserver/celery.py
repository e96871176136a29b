"""Celery application of the card arena.

All configuration lives in Django settings under the ``CELERY_`` prefix.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

app = Celery("cardserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
