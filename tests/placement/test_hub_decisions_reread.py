"""Each chunk of a full reschedule reads the hub's decisions again (`service.current_snapshot`): after a
first whole read it reads each row's key and digest, fetches only the rows that changed (added, updated
in place, deleted), and the snapshot then counts what a whole read would."""

import gc
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Hub
from placement import hubdecisions, service
from placement.models import Owner, Placement, PlacementDecision
from tests.factories import PlacementDecisionFactory, PlacementFactory
from tests.placement.conftest import WEB_SPEC

pytestmark = pytest.mark.django_db

LABEL = "cluster.open-cluster-management.io/placement"


def _decision(placement: Placement, clusters: list[str], **extra: Any) -> PlacementDecision:
    decision: PlacementDecision = PlacementDecisionFactory(
        placement=placement,
        owner=Owner.DASHBOARD,
        clusters=clusters,
        labels={LABEL: placement.name},
        **extra,
    )
    return decision


def _reads_of_decisions(hub: Hub, *placements: Placement) -> tuple[set[str], list[str]]:
    """Refresh; answers the clusters these placements have decided, and the statements that read
    decision rows."""
    with CaptureQueriesContext(connection) as queries:
        snapshot = service.current_snapshot(hub)
    reads = [q["sql"] for q in queries.captured_queries if "placement_placementdecision" in q["sql"]]
    decided = set().union(*(snapshot.ocm.decided_cluster_names(p.namespace, p.name) for p in placements))
    return decided, reads


def test_only_the_changed_rows_are_read_again_and_the_counts_match_a_whole_read(manifests_hub: Hub) -> None:
    first = PlacementFactory(hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", spec=WEB_SPEC)
    second = PlacementFactory(hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", spec=WEB_SPEC)
    kept = _decision(first, ["cluster1"])
    moved = _decision(second, ["cluster2"])
    decided, reads = _reads_of_decisions(manifests_hub, first, second)
    assert decided == {"cluster1", "cluster2"}
    # nothing changed: one statement, of keys and digests
    decided, reads = _reads_of_decisions(manifests_hub, first, second)
    assert decided == {"cluster1", "cluster2"} and len(reads) == 1
    # what another worker's runs write: an update in place, a new page, a deletion
    PlacementDecision.objects.filter(pk=moved.pk).update(
        decisions=[{"clusterName": "cluster3", "reason": ""}]
    )
    added = _decision(first, ["cluster2"], name=f"{first.name}-decision-2")
    decided, reads = _reads_of_decisions(manifests_hub, first, second)
    assert decided == {"cluster1", "cluster2", "cluster3"} and len(reads) == 2
    assert f"IN ({moved.pk}, {added.pk})" in reads[1] or f"IN ({added.pk}, {moved.pk})" in reads[1]
    PlacementDecision.objects.filter(pk=kept.pk).delete()
    decided, _ = _reads_of_decisions(manifests_hub, first, second)
    assert decided == {"cluster2", "cluster3"}
    snapshot = service.current_snapshot(manifests_hub)
    whole = service.hub_snapshot(manifests_hub).ocm  # the same snapshot: compare with a fresh index
    fresh = type(whole.decision_index()).build(hubdecisions.all_of(manifests_hub), whole.position)
    assert snapshot.ocm.decision_index().counts.tolist() == fresh.counts.tolist()


def test_the_reading_does_not_keep_a_replaced_snapshot_alive(manifests_hub: Hub) -> None:
    service.current_snapshot(manifests_hub)
    seen = service._decisions._seen[manifests_hub.pk]
    assert seen.inventory() is not None
    service.forget_snapshots()
    gc.collect()
    assert seen.inventory() is None
    # the next chunk's snapshot is new: its decisions are read whole again
    assert (
        service.current_snapshot(manifests_hub).ocm is service._decisions._seen[manifests_hub.pk].inventory()
    )
