"""Rescheduling on hub changes: the change listener, the trigger texts and timed runs (in-process tasks)."""

import threading
import time
from datetime import UTC, datetime
from unittest import mock

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from inventory import changes
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub
from inventory.signals import hub_changed
from inventory.watch import HubWatcher
from placement import service, tasks
from placement.models import Placement
from placement.requeue import requeued
from tests.factories import placement_role, synced_demo_hub_row

pytestmark = pytest.mark.django_db
GOLD = {
    "clusterSets": ["global"],
    "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}],
}


def untainted(demo_hub: DemoHub) -> str:
    """A cluster the gold placement can take once labelled (no taint to tolerate)."""
    for name in demo_hub.store.names("ManagedCluster"):
        if not (demo_hub.store.get("ManagedCluster", name).get("spec") or {}).get("taints"):
            return name
    raise AssertionError("the demo hub has no untainted cluster")


def test_a_label_change_on_the_hub_reschedules_the_placement(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="gold", spec=GOLD, actor=editor
    )
    assert placement.decisions.get().decisions == []
    name = untainted(demo_hub)
    stop = threading.Event()
    safety = threading.Timer(15, stop.set)
    safety.start()

    def stop_once_requeued(hub_changes: changes.HubChanges, **_: object) -> None:
        if requeued(hub_changes).placements:
            stop.set()

    hub_changed.connect(stop_once_requeued)
    threading.Timer(
        0.3, demo_hub.store.patch, ("ManagedCluster", name, {"metadata": {"labels": {"tier": "gold"}}})
    ).start()
    started = time.monotonic()
    try:
        # in this thread: the shared in-memory SQLite test database takes writes from one thread only
        HubWatcher(hub, stop, timeout_seconds=5).run_kind(KINDS_BY_NAME["ManagedCluster"])
    finally:
        safety.cancel()
        hub_changed.disconnect(stop_once_requeued)
    assert time.monotonic() - started < 5
    assert [d["clusterName"] for d in placement.decisions.get().decisions] == [name]
    change = placement.history.first()
    assert (change.trigger, change.added, change.removed) == ("cluster label changed", [name], [])


def test_a_queued_reschedule_coalesces_later_requests(web_placement: Placement) -> None:
    Placement.objects.filter(pk=web_placement.pk).update(reschedule_queued_at=datetime.now(UTC))
    with mock.patch.object(tasks.reschedule_placement, "apply_async") as send:
        assert tasks.request_reschedule([web_placement.pk], "cluster label changed") == []
        send.assert_not_called()
        Placement.objects.filter(pk=web_placement.pk).update(
            reschedule_queued_at=datetime(2020, 1, 1, tzinfo=UTC)
        )
        assert tasks.request_reschedule([web_placement.pk], "cluster label changed") == [web_placement.pk]
        send.assert_called_once()
        assert send.call_args.args == ((web_placement.pk, "cluster label changed"),)


def test_the_run_clears_the_marker(web_placement: Placement) -> None:
    assert tasks.request_reschedule([web_placement.pk], "periodic resync") == [web_placement.pk]
    web_placement.refresh_from_db()
    assert web_placement.reschedule_queued_at is None  # ran in-process and finished


def test_toleration_expiry_schedules_a_timed_run(
    manifests_hub: Hub, editor: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = {
        "clusterSets": ["global"],
        "tolerations": [
            {
                "key": "cluster.open-cluster-management.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 600,
            }
        ],
    }
    placement_role(manifests_hub, ("ml",), user=editor)  # admin of the set bound to namespace ml
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=manifests_hub, namespace="ml", name="edge", spec=spec, actor=editor
    )
    now = datetime(2026, 11, 20, 3, 15, tzinfo=UTC)  # edge-store-042 turned unreachable at 03:12:44
    # as with a worker: the timed run is queued with a countdown
    monkeypatch.setitem(tasks.reschedule_placement.app.conf, "task_always_eager", False)
    with mock.patch.object(tasks.reschedule_placement, "apply_async") as apply_async:
        service.reschedule(placement, trigger="periodic resync", now=now)
        service.reschedule(placement, trigger="periodic resync", now=now)  # same moment: queued once
    placement.refresh_from_db()
    assert placement.requeue_at == datetime(2026, 11, 20, 3, 22, 44, tzinfo=UTC)
    apply_async.assert_called_once_with((placement.pk, "taint toleration expired"), countdown=464.0)
    assert "edge-store-042" in placement.explanation["selected"]


def test_describe_names_the_change(web_placement: Placement) -> None:
    old = web_placement.hub.managedclusters.first()
    new = type(old).objects.get(pk=old.pk)
    new.labels = {**old.labels, "tier": "gold"}
    hub_changes = changes.HubChanges(web_placement.hub_id, clusters=[changes.Change(old, new)])
    assert tasks.describe(hub_changes) == "cluster label changed"
    hub_changes.add_on_scores.append(changes.Change(None, None))
    assert tasks.describe(hub_changes) == "cluster label changed, add-on score changed"
