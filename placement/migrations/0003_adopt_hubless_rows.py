"""Rows without a hub become dashboard-owned rows of a hub (alone: PostgreSQL refuses ALTER TABLE
on rows updated in the same transaction)."""

from django.db import migrations

# Where rows without a hub go: the offline hub `load_demo` uses (placement.management.commands.load_demo).
MANIFESTS_HUB = "manifests"
MANIFESTS_SERVER_URL = "http://127.0.0.1:8001"


def adopt_hubless_rows(apps, schema_editor):
    """Rows without a hub were created in the dashboard: they become dashboard-owned placements of the
    offline hub "manifests", and their decisions and bindings follow them."""
    Hub = apps.get_model("inventory", "Hub")
    Placement = apps.get_model("placement", "Placement")
    PlacementDecision = apps.get_model("placement", "PlacementDecision")
    ClusterResourceBinding = apps.get_model("placement", "ClusterResourceBinding")
    if Placement.objects.filter(hub__isnull=True).exists():
        hub, _ = Hub.objects.get_or_create(
            name=MANIFESTS_HUB,
            defaults={"server_url": MANIFESTS_SERVER_URL, "serves_ocm": True, "serves_fleet": True},
        )
        Placement.objects.filter(hub__isnull=True).update(hub=hub, owner="dashboard")
    for model in (PlacementDecision, ClusterResourceBinding):
        # orphans without a placement cannot be attributed to any hub or placement
        model.objects.filter(hub__isnull=True, placement__isnull=True).delete()
        for row in model.objects.filter(hub__isnull=True).select_related("placement"):
            row.hub_id, row.owner = row.placement.hub_id, "dashboard"
            row.save(update_fields=["hub", "owner"])


class Migration(migrations.Migration):

    dependencies = [
        ('placement', '0002_owner_explanation_events_history'),
    ]

    operations = [
        migrations.RunPython(adopt_hubless_rows, migrations.RunPython.noop),
    ]
