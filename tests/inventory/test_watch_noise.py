"""The watch tells noise from changes: heartbeats and condition timestamps from the real demo hub are
stored but reschedule nothing and leave the hub's snapshot alone; a label change does both.

The changes are made on the hub before the watch starts, then replayed by the watch in order; a label
change made last is the sentinel that ends it, so everything before it has been written.
"""

from collections.abc import Callable, Iterator
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from demohub import Clock, DemoHub
from inventory import changes
from inventory.models import Hub, ManagedCluster
from inventory.signals import hub_changed
from placement import service
from placement.models import HubInventoryVersion, Placement
from placement.scheduler.fleet.eligibility import eligibility_reason
from tests.factories import synced_demo_hub_row
from tests.watching import watch_kind_until

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
AVAILABLE = "ManagedClusterConditionAvailable"


@pytest.fixture
def demo_hub() -> Iterator[DemoHub]:
    # the hub's clock stands still unless the test moves it, so every heartbeat is a new value
    with DemoHub(
        clusters=12, fleet=True, seed=7, bookmark_seconds=0.2, clock=Clock.frozen(timezone.now())
    ) as hub:
        yield hub


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def version(hub: Hub) -> int:
    return HubInventoryVersion.objects.filter(hub=hub).values_list("version", flat=True).first() or 0


def watch_until_labelled(hub: Hub, kind: str, name: str) -> list[changes.HubChanges]:
    """Watch one kind until the cluster `name` is heard with label tier=gold; answers what was heard."""
    heard: list[changes.HubChanges] = []

    def labelled(hub_changes: changes.HubChanges, **_: object) -> bool:
        heard.append(hub_changes)
        views: list[changes.Change] = [*hub_changes.clusters, *hub_changes.member_clusters]
        return any(c.new and c.new.name == name and c.new.labels.get("tier") == "gold" for c in views)

    watch_kind_until(hub, kind, hub_changed, labelled)
    return heard


def names(heard: list[changes.HubChanges], field: Callable[[changes.HubChanges], list]) -> list[list[str]]:
    return [sorted((c.new or c.old).name for c in field(h)) for h in heard]


def test_heartbeats_reschedule_nothing_and_a_label_change_does(
    demo_hub: DemoHub, hub: Hub, reschedules
) -> None:
    members = demo_hub.store.names("MemberCluster")
    crps = set(
        Placement.objects.filter(hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT).values_list(
            "pk", flat=True
        )
    )
    assert crps
    before = version(hub)
    demo_hub.clock.advance(30)
    assert demo_hub.churn.beat() > 1
    demo_hub.store.patch("MemberCluster", members[0], {"metadata": {"labels": {"tier": "gold"}}})

    heard = watch_until_labelled(hub, "MemberCluster", members[0])

    assert names(heard, lambda h: h.member_clusters) == [[members[0]]]
    assert version(hub) == before + 1
    assert sorted(reschedules) == sorted(crps)
    # the heartbeats are stored all the same
    beat = demo_hub.store.get("MemberCluster", members[1])["status"]["agentStatus"][0][
        "lastReceivedHeartbeat"
    ]
    stored = ManagedCluster.objects.get(hub=hub, kind="MemberCluster", name=members[1])
    assert stored.agent_status[0]["lastReceivedHeartbeat"] == beat


def test_a_condition_timestamp_is_noise_and_its_status_is_not(
    demo_hub: DemoHub, hub: Hub, reschedules
) -> None:
    clusters = demo_hub.store.names("ManagedCluster")
    quiet, flipped, sentinel = clusters[0], clusters[1], clusters[2]
    before = version(hub)
    demo_hub.clock.advance(30)
    for name, status in ((quiet, None), (flipped, "Unknown")):
        cluster = demo_hub.store.get("ManagedCluster", name)
        conditions = cluster["status"]["conditions"]
        for condition in conditions:
            if condition["type"] == AVAILABLE:
                condition["lastTransitionTime"] = demo_hub.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
                condition["status"] = status or condition["status"]
        demo_hub.store.patch(
            "ManagedCluster", name, {"status": {"conditions": conditions}}, subresource="status"
        )
    demo_hub.store.patch("ManagedCluster", sentinel, {"metadata": {"labels": {"tier": "gold"}}})

    heard = watch_until_labelled(hub, "ManagedCluster", sentinel)

    assert sorted(sum(names(heard, lambda h: h.clusters), [])) == sorted([flipped, sentinel])
    assert version(hub) - before == len(heard)


def test_a_snapshot_reads_heartbeats_again_once_one_it_holds_goes_stale(hub: Hub) -> None:
    """Heartbeats do not mark the snapshot stale, so it may hold older ones than the rows: past the moment
    the first of them would expire it reads the members' stored heartbeats again, without a new build; a
    member whose agent stopped reporting is then stale, the others are not."""
    snapshot = service.hub_snapshot(hub)
    assert snapshot.fresh_until is not None
    assert service.hub_snapshot(hub, snapshot.fresh_until - timedelta(seconds=1)) is snapshot
    later = snapshot.fresh_until + timedelta(minutes=1)
    members = ManagedCluster.objects.filter(hub=hub, kind=ManagedCluster.Kind.MEMBER_CLUSTER).order_by("name")
    silent, *reporting = list(members)
    for member in reporting:
        # what the watch stores for a heartbeat, without a change to the hub's inventory version
        for agent in member.agent_status:
            agent["lastReceivedHeartbeat"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
        member.save(update_fields=["agent_status"])
    before = version(hub)

    refreshed = service.hub_snapshot(hub, later)

    assert version(hub) == before
    assert refreshed is not snapshot and refreshed.ocm is snapshot.ocm
    assert refreshed.fresh_until is not None and refreshed.fresh_until > later
    assert service.hub_snapshot(hub, later) is refreshed
    fleet = refreshed.fleet
    everyone = np.ones(len(fleet), dtype=bool)
    # the columns the scheduler reads and the members the explanations read agree
    stale = {fleet.names[i] for i in np.flatnonzero(fleet.eligibility.ineligible(later, everyone))}
    by_reason = {m.name for m in fleet.clusters if "no recent heartbeat" in str(eligibility_reason(m, later))}
    assert stale == by_reason == {silent.name}
