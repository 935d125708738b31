from django.apps import AppConfig


class PlacementConfig(AppConfig):
    name = "placement"
    verbose_name = "Placements"

    def ready(self) -> None:
        from inventory import changes
        from placement import tasks

        # hub syncs and watches re-queue the placements the upstream trigger chain names: recorded as
        # owed with the change, queued once it is committed
        changes.register_recorder(tasks.record_hub_changes)
        changes.register(tasks.on_hub_changes)
