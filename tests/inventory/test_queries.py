"""Read-side queries: placements per cluster (decisions and live Fleet bindings), set bindings, hub counts."""

import pytest

from inventory import queries
from inventory.models import Hub, ManagedCluster, ManagedClusterSet
from tests.factories import (
    ClusterResourceBindingFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    PlacementDecisionFactory,
    PlacementFactory,
    SyncRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_placement_counts_per_hub_from_decisions_and_live_bindings() -> None:
    east, west = HubFactory(name="east"), HubFactory(name="west")
    a_east = ManagedClusterFactory(hub=east, name="a")
    a_west = ManagedClusterFactory(hub=west, name="a")
    member = ManagedClusterFactory(hub=east, name="m", kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    web = PlacementFactory(hub=east, name="web")
    # two decision pages of one placement, and a second placement
    PlacementDecisionFactory(placement=web, name="web-decision-1", clusters=["a", "b"])
    PlacementDecisionFactory(placement=web, name="web-decision-2", clusters=["c"])
    PlacementDecisionFactory(placement__hub=east, placement__name="db", clusters=["a"])
    # a decision without its Placement (not a placement selecting anything) and another hub's decision
    PlacementDecisionFactory(placement=None, hub=east, namespace="x", name="orphan", clusters=["a"])
    PlacementDecisionFactory(placement__hub=west, clusters=["z"])
    ClusterResourceBindingFactory(placement__hub=east, target="m", state="Bound")
    ClusterResourceBindingFactory(placement__hub=east, target="m", state="Scheduled")
    ClusterResourceBindingFactory(placement__hub=east, target="m", state="Unscheduled")
    ClusterResourceBindingFactory(placement__hub=west, target="m")

    counts = queries.placement_counts([a_east, a_west, member])

    assert counts == {a_east.pk: 2, a_west.pk: 0, member.pk: 2}
    assert [p.name for p in queries.placements_selecting(a_east)] == ["db", "web"]
    assert len(queries.placements_selecting(member)) == 2
    assert list(queries.placements_selecting(a_west)) == []


def test_placement_counts_of_no_rows_needs_no_query(django_assert_num_queries) -> None:
    with django_assert_num_queries(0):
        assert queries.placement_counts([]) == {}


def test_bound_namespaces_match_set_and_hub() -> None:
    east, west = HubFactory(name="east"), HubFactory(name="west")
    prod = ManagedClusterSetFactory(hub=east, name="prod")
    dev = ManagedClusterSetFactory(hub=east, name="dev")
    ManagedClusterSetBindingFactory(hub=east, namespace="b", name="prod")
    ManagedClusterSetBindingFactory(hub=east, namespace="a", name="prod")
    ManagedClusterSetBindingFactory(hub=west, namespace="c", name="prod")
    assert queries.bound_namespaces([prod, dev]) == {prod.pk: ["a", "b"]}


def test_selector_text_of_each_selector_type() -> None:
    hub = HubFactory()
    exclusive = ManagedClusterSetFactory(hub=hub, name="prod")
    labelled = ManagedClusterSetFactory(
        hub=hub,
        name="gpu",
        selector_type=ManagedClusterSet.SelectorType.LABEL_SELECTOR,
        label_selector={"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
    )
    everything = ManagedClusterSetFactory(
        hub=hub, name="global", selector_type=ManagedClusterSet.SelectorType.LABEL_SELECTOR, label_selector={}
    )
    assert queries.selector_text(exclusive) == "cluster.open-cluster-management.io/clusterset=prod"
    assert queries.selector_text(labelled) == "gpu"
    assert queries.selector_text(everything) == "<everything>"


def test_hub_counts_and_latest_run() -> None:
    hub = HubFactory(name="east")
    ManagedClusterFactory.create_batch(3, hub=hub)
    ManagedClusterFactory(hub=hub, stale=True)
    ManagedClusterSetFactory.create_batch(2, hub=hub)
    SyncRunFactory(hub=hub, pages=1)
    latest = SyncRunFactory(hub=hub, pages=2)
    HubFactory(name="empty")
    root = UserFactory(is_superuser=True)
    hubs = {h.name: h for h in queries.with_hub_counts(Hub.objects.all(), root)}
    assert (hubs["east"].cluster_count, hubs["east"].stale_count, hubs["east"].set_count) == (4, 1, 2)
    assert (hubs["empty"].cluster_count, hubs["empty"].set_count, hubs["empty"].latest_run_id) == (0, 0, None)
    assert queries.latest_runs(list(hubs.values())) == {hub.pk: latest}
