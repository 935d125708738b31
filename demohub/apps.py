from django.apps import AppConfig


class DemoHubConfig(AppConfig):
    """Installed for its `demo_hub` command only: no models, and no production app imports it."""

    name = "demohub"
    verbose_name = "Demo hub"
