"""The taint preview, for those who may save the taints: the placements that hold the cluster or count it
as a candidate, evaluated on the inventory with the edited cluster; nothing is written."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory import editing
from inventory.models import ClusterSetRole, ManagedCluster, ManagedClusterSet
from placement import service
from placement.models import Placement
from tests.factories import ClusterSetRoleFactory, PlacementFactory, UserFactory

pytestmark = pytest.mark.django_db

# the demo MemberClusters' heartbeats are from 11:59:30 that day
DEMO_NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
DRAIN = {"key": "example.com/drain", "effect": "NoSelect"}


def role_on_global(role: str, username: str) -> User:
    """A user with `role` on the demo manifests' set global, which holds every ManagedCluster."""
    cluster_set = ManagedClusterSet.objects.get(name="global")
    return ClusterSetRoleFactory(cluster_set=cluster_set, role=role, user=UserFactory(username=username)).user


@pytest.fixture
def admin(demo_fleet) -> User:
    """Previews are for those who may save the taints: an admin of a set holding the cluster."""
    return role_on_global(ClusterSetRole.Role.ADMIN, "admin")


def verdicts(
    actor: User, cluster_name: str, taints: list[dict], kind: str = "ManagedCluster"
) -> dict[str, tuple]:
    cluster = ManagedCluster.objects.get(name=cluster_name, kind=kind)
    impacts = editing.preview_taints(cluster, taints, actor=actor, now=DEMO_NOW)
    return {str(impact.placement): (impact.verdict, impact.reason) for impact in impacts}


def test_a_taint_without_toleration_drops_the_cluster_from_a_placement_that_selected_it(admin: User) -> None:
    found = verdicts(admin, "prod-use1-a", [DRAIN])
    # frontend holds prod-use1-a (its PlacementDecision); the others count it as a candidate (set global)
    assert found["web/frontend"] == ("drops", "taint example.com/drain:NoSelect is not tolerated")
    assert found["ml/gpu-inference"][0] == found["platform/monitoring-agents"][0] == "stays out"


@pytest.mark.parametrize("effect", ["NoSelectIfNew", "PreferNoSelect"])
def test_taints_that_spare_current_decisions_keep_the_cluster(admin: User, effect: str) -> None:
    found = verdicts(admin, "prod-use1-a", [{"key": "example.com/drain", "effect": effect}])
    assert found["web/frontend"] == ("keeps", "")


def test_a_tolerated_taint_changes_nothing_and_removing_one_gains_the_cluster(admin: User) -> None:
    gpu = [{"key": "nvidia.com/gpu", "value": "a100", "effect": "NoSelect"}]
    with_taint = verdicts(admin, "prod-usw2-gpu", gpu)
    assert with_taint["platform/monitoring-agents"] == (
        "stays out",
        "taint nvidia.com/gpu=a100:NoSelect is not tolerated",
    )
    # gpu-inference tolerates the taint: it is not what keeps the cluster out there
    assert "not tolerated" not in with_taint["ml/gpu-inference"][1]
    without = verdicts(admin, "prod-usw2-gpu", [])
    assert without["platform/monitoring-agents"] == ("gains", "")


def test_only_placements_holding_or_considering_the_cluster_are_evaluated(admin: User) -> None:
    hub = Placement.objects.get(name="frontend").hub
    PlacementFactory(hub=hub, namespace="unbound", name="elsewhere", spec={})
    found = verdicts(admin, "stage-use1", [DRAIN])
    # its sets staging and global are bound to web, ml and platform, but frontend (in web) lists only
    # prod-us and prod-eu; nothing binds a set to "unbound"
    assert set(found) == {"ml/gpu-inference", "platform/monitoring-agents"}


def test_fleet_member_clusters_are_previewed_with_the_fleet_scheduler(demo_fleet, root: User) -> None:
    # a superuser: these MemberClusters have no ManagedCluster namesake, so no set holds them
    drain = [{"key": "example.com/drain", "effect": "NoSchedule"}]
    found = verdicts(root, "aks-eastus-prod-01", drain, kind="MemberCluster")
    reason = "taint &{Key:example.com/drain Value: Effect:NoSchedule} cannot be tolerated"
    assert found == {"cluster-baseline": ("stays out", reason), "web-app": ("stays out", reason)}


def test_a_preview_writes_nothing_and_leaves_the_cached_inventory_alone(admin: User) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    snapshot = service.hub_snapshot(cluster.hub)
    with CaptureQueriesContext(connection) as captured:
        editing.preview_taints(cluster, [DRAIN], actor=admin, now=DEMO_NOW)
    writes = [q["sql"] for q in captured if q["sql"].split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
    assert writes == []
    assert snapshot.ocm.cluster("prod-use1-a").taints == ()
    cluster.refresh_from_db()
    assert cluster.taints == []


def test_invalid_taints_are_refused_before_anything_is_evaluated(admin: User) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    with pytest.raises(ValidationError) as caught:
        editing.preview_taints(cluster, [{"key": "bad key", "effect": "NoSelect"}], actor=admin)
    assert list(caught.value.message_dict) == ["taints[0].key"]


def test_only_those_who_may_save_may_preview(demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    with pytest.raises(PermissionDenied):
        editing.preview_taints(cluster, [DRAIN], actor=role_on_global(ClusterSetRole.Role.VIEW, "viewer"))


def test_a_cel_predicate_reading_taints_is_scheduled_not_guessed(admin: User) -> None:
    """Only the taint filter reads taints, except CEL, which sees the whole ManagedCluster."""
    hub = Placement.objects.get(name="frontend").hub
    drained = {
        "clusterSets": ["global"],
        "predicates": [
            {
                "requiredClusterSelector": {
                    "celSelector": {
                        "celExpressions": [
                            'managedCluster.spec.taints.exists(t, t.key == "example.com/drain")'
                        ]
                    }
                }
            }
        ],
        "tolerations": [{"key": "example.com/drain", "operator": "Exists"}],
    }
    service.create_placement(
        kind="Placement", hub=hub, namespace="ml", name="drained", spec=drained, actor="test"
    )
    found = verdicts(admin, "prod-use1-a", [DRAIN])
    assert found["ml/drained"] == ("gains", "")
    assert found["web/frontend"][0] == "drops"  # settled by the taint filter alone
