"""ASGI entry point."""

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

from fleetui.env import require_secret_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")

application = get_asgi_application()
require_secret_key(settings.SECRET_KEY_CONFIGURED)
