"""The site package: settings, root URLs, home page, and the Celery app loaded with Django."""

# Loaded with Django so that @shared_task binds to this app.
from fleetui.celery import app as celery_app

__all__ = ("celery_app",)
