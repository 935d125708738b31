"""WSGI entry point (gunicorn fleetui.wsgi)."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from fleetui.env import require_secret_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")

application = get_wsgi_application()
require_secret_key(settings.SECRET_KEY_CONFIGURED)
