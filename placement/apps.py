"""Django app config of placements; connects them to the inventory's hooks and signals when ready."""

from django.apps import AppConfig


class PlacementConfig(AppConfig):
    name = "placement"
    verbose_name = "Placements"

    def ready(self) -> None:
        from celery.signals import worker_init

        from inventory import signals
        from placement import access, loader, queries, taint_impact, tasks

        # the role rules of placements and what belongs to them, beside inventory's own
        access.register_rules()
        # how the hub sync stores placements and what belongs to them, beside inventory's own kinds
        loader.register_kinds()
        # the placement counts and lists of the inventory's hub and cluster pages and API
        queries.register()
        # the taint editor's preview of what an edit would do to the placements
        taint_impact.register()

        # hub syncs and watches re-queue the placements the upstream trigger chain names: recorded as
        # owed with the change, queued once it is committed
        signals.hub_changes_recorded.connect(tasks.record_hub_changes)
        signals.hub_changed.connect(tasks.on_hub_changes)
        # a worker builds the hubs' snapshots before it takes tasks
        worker_init.connect(tasks.warm_snapshots, weak=False)
