"""Pending reschedules in-process: a hub change marks the placements it owes in the transaction that
writes it, a successful run clears the mark, and the sweep runs what is left (one query when nothing is).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from demohub import DemoHub
from inventory import changes
from inventory.hubclient import KINDS_BY_NAME
from inventory.signals import hub_changes_recorded
from inventory.sync import apply_event
from placement import service, tasks
from placement.models import Placement
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.test_reschedule import GOLD, untainted

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]


def test_a_hub_change_is_pending_until_its_run_succeeds(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="gold", spec=GOLD, actor=editor
    )
    name = untainted(demo_hub)
    demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "gold"}}})
    seen: list[tuple] = []

    def after_marking(hub_changes: changes.HubChanges, **_: object) -> None:
        row = Placement.objects.get(pk=placement.pk)
        seen.append((row.reschedule_pending_since is not None, row.reschedule_pending_trigger))

    hub_changes_recorded.connect(after_marking)
    try:
        apply_event(
            hub, KINDS_BY_NAME["ManagedCluster"], "MODIFIED", demo_hub.store.get("ManagedCluster", name)
        )
    finally:
        hub_changes_recorded.disconnect(after_marking)

    assert seen == [(True, "cluster label changed")]
    placement.refresh_from_db()
    assert (placement.reschedule_pending_since, placement.reschedule_pending_trigger) == (None, "")
    assert [d["clusterName"] for d in placement.decisions.get().decisions] == [name]


def test_the_sweep_runs_what_is_pending_and_reads_once_when_nothing_is(
    web_placement: Placement, django_assert_num_queries
) -> None:
    with django_assert_num_queries(1):
        assert tasks.sweep_pending_reschedules() == []

    # what a process that died between writing a change and queueing its runs leaves behind
    tasks.mark_pending([web_placement.pk], "cluster label changed")
    assert tasks.sweep_pending_reschedules() == []  # its own run may still come: not before the grace

    Placement.objects.filter(pk=web_placement.pk).update(
        reschedule_pending_since=timezone.now() - timedelta(seconds=tasks.PENDING_GRACE_SECONDS + 1)
    )
    before = web_placement.last_scheduled_at
    assert tasks.sweep_pending_reschedules() == [web_placement.pk]
    web_placement.refresh_from_db()
    assert web_placement.reschedule_pending_since is None
    assert web_placement.last_scheduled_at > before
