"""Django project package of the card arena: settings, URLs, Celery app."""

# The Celery app is imported here so that it is configured whenever Django starts,
# and so that `shared_task` in the apps binds to it.
from .celery import app as celery_app

__all__ = ("celery_app",)
