"""Django app config of the site; registers the project's system checks when Django is ready."""

from django.apps import AppConfig


class FleetUIConfig(AppConfig):
    name = "fleetui"
    verbose_name = "Fleet Placement Dashboard"

    def ready(self) -> None:
        from fleetui import checks  # noqa: F401  (registers the system checks)
