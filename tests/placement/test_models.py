"""Placement models: owners, the data migration of hub-less rows, events kept per placement."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from placement.history import record_events
from placement.models import DecisionChange, Placement, PlacementEvent
from tests.factories import PlacementFactory, UserFactory

pytestmark = pytest.mark.django_db
AT = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_placements_default_to_hub_owned_mirrors() -> None:
    placement = PlacementFactory()
    assert placement.owner == Placement.Owner.HUB and placement.read_only


def test_only_the_last_events_are_kept() -> None:
    placement = PlacementFactory()
    record_events(placement, [{"type": "Normal", "reason": f"R{i}", "message": ""} for i in range(130)], AT)
    assert placement.events.count() == PlacementEvent.KEEP
    assert placement.events.first().reason == "R129"  # newest first


def test_actor_display_is_the_user_or_the_text() -> None:
    placement = PlacementFactory()
    by_user = DecisionChange.objects.create(
        placement=placement, at=AT, trigger="t", actor=UserFactory(username="bo")
    )
    by_command = DecisionChange(placement=placement, at=AT, trigger="t", actor_name="root (manage.py apply)")
    assert (by_user.actor_display, by_command.actor_display) == ("bo", "root (manage.py apply)")


@pytest.mark.django_db(transaction=True)
def test_hubless_rows_become_dashboard_owned_rows_of_hub_manifests() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("placement", "0001_initial")])
    old = executor.loader.project_state([("placement", "0001_initial")]).apps
    placement = old.get_model("placement", "Placement").objects.create(
        kind="Placement", namespace="web", name="shop"
    )
    old.get_model("placement", "PlacementDecision").objects.create(
        placement=placement, namespace="web", name="shop-decision-1"
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    adopted = Placement.objects.get(name="shop")
    assert (adopted.hub.name, adopted.owner) == ("manifests", "dashboard")
    decision = adopted.decisions.get()
    assert (decision.hub, decision.owner) == (adopted.hub, "dashboard")
