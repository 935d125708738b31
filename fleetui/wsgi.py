"""WSGI entry point (gunicorn fleetui.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")

application = get_wsgi_application()
