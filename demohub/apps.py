"""Django app config of the demo hub, installed only so `manage.py demo_hub` is found."""

from django.apps import AppConfig


class DemoHubConfig(AppConfig):
    """Installed for its `demo_hub` command only: no models, and no production app imports it."""

    name = "demohub"
    verbose_name = "Demo hub"
