"""The rollouts' AppConfig: no models of its own, so Django finds its commands and Celery its tasks."""

from django.apps import AppConfig


class RolloutsConfig(AppConfig):
    name = "placement.rollouts"
    label = "rollouts"
    verbose_name = "Rollouts"

    def ready(self) -> None:
        from inventory import signals as inventory_signals
        from placement import signals, views
        from placement.rollouts import tasks
        from placement.rollouts.views import placement_sections

        # a reschedule that changed a dashboard-owned CRP's bindings starts a rolling-update round
        signals.crp_bindings_changed.connect(tasks.on_crp_bindings_changed)
        # the hub's reports on those bindings (Available, DiffReported) run the next one
        inventory_signals.managed_objects_reported.connect(tasks.on_managed_objects_reported)
        # the placement page's Rollout section and staged update runs
        views.sections.fill(placement_sections)
