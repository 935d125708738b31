"""A burst of hub changes touching one placement reschedules it once or twice, in-process (no broker):
the watch writes the burst in a batch or two, and each batch queues the placement once."""

import threading

import pytest

from demohub import DemoHub
from inventory import changes
from inventory.hubclient import KINDS_BY_NAME
from inventory.signals import hub_changed
from inventory.watch import HubWatcher
from placement import service
from placement.models import Placement
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.test_reschedule import GOLD

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
BURST = 50


def test_a_burst_of_50_label_changes_reschedules_the_placement_once_or_twice(
    demo_hub: DemoHub, reschedules: list[int]
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="gold", spec=GOLD, actor=editor
    )
    names = demo_hub.store.names("ManagedCluster")
    # made before the watch starts, which replays them from the last list as one burst
    for number in range(BURST):
        labels = {"tier": "gold" if number % 2 else "silver", "burst": str(number)}
        demo_hub.store.patch("ManagedCluster", names[number % len(names)], {"metadata": {"labels": labels}})
    reschedules.clear()
    stop = threading.Event()
    safety = threading.Timer(15, stop.set)

    def last_heard(hub_changes: changes.HubChanges, **_: object) -> None:
        if any(c.new and c.new.labels.get("burst") == str(BURST - 1) for c in hub_changes.clusters):
            stop.set()

    hub_changed.connect(last_heard)
    safety.start()
    try:
        HubWatcher(hub, stop, timeout_seconds=5).run_kind(KINDS_BY_NAME["ManagedCluster"])
    finally:
        safety.cancel()
        hub_changed.disconnect(last_heard)

    assert 1 <= reschedules.count(placement.pk) <= 2
    # the last run saw the burst's end: the decisions are what the scheduler decides now
    expected = service.evaluate(placement).selected
    assert sorted(d["clusterName"] for d in placement.decisions.get().decisions) == sorted(expected)
