"""Every list and detail page, and every API list and detail, answers in a pinned number of queries that
does not grow with the data: the same fixture is seeded with 1 and with 30 rows per list, and each page
must answer 200 within the same bound at both sizes.

Every page is read by a superuser and by a user holding only view roles (on the hub's sets and in the
placements' namespace), because the role checks are subqueries of the counted queries. Pages
are requested by path, not by URL name, so that moving a page to another module or namespace leaves the
pins in place; a bound that has to rise is a regression to explain, not a number to bump.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client
from django.utils import timezone

from inventory.models import ClusterSetRole, Hub, ManagedCluster, ManagedClusterSet, RejectedObject
from placement import service
from placement.models import ApprovalRequest, Placement, StagedUpdateRun, StagedUpdateStrategy
from tests.factories import (
    AddOnPlacementScoreFactory,
    AuditEntryFactory,
    ClusterResourceBindingFactory,
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    DecisionChangeFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    PlacementDecisionFactory,
    PlacementEventFactory,
    PlacementFactory,
    StagedUpdateStrategyFactory,
    SyncRunFactory,
    UserFactory,
    placement_role,
)
from tests.placement.runs_support import approval_request
from tests.placement_pages.explanations import ocm_explanation_for

SIZES = [1, 30]
# big enough that every seeded row is on the first page of every list
ALL = "?per_page=100"


@dataclass
class Seeded:
    """The readers, and the rows whose detail pages are requested; every list holds `rows` of its kind."""

    superuser: AbstractBaseUser
    viewer: AbstractBaseUser
    hub: Hub
    cluster: ManagedCluster
    cluster_set: ManagedClusterSet
    ocm: Placement
    crp: Placement
    strategy: StagedUpdateStrategy
    run: StagedUpdateRun
    approval: ApprovalRequest


def seed(rows: int) -> Seeded:
    """Hub east with `rows` of each kind: clusters in set prod (bound to namespace default), further sets,
    OCM Placements in default with decisions, CRPs, strategies, runs waiting for approval, audit entries,
    rejected objects, sync runs and further hubs. The first OCM Placement and CRP carry `rows` of what
    their detail pages show (scored clusters, decisions or bindings, events, history, audit entries).

    The viewer holds view roles on every set of the hub and in namespace default, and wrote the clusters'
    audit entries (others' entries are not theirs to read); rejected objects are the superusers' alone."""
    hub = HubFactory(name="east", serves_fleet=True)
    names = [f"c-{index:04d}" for index in range(rows)]
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    clusters = [
        ClusterSetMembershipFactory(cluster_set=prod, cluster__hub=hub, cluster__name=name).cluster
        for name in names
    ]
    ManagedClusterSetBindingFactory(hub=hub, namespace="default", name="prod")
    viewer = placement_role(hub, ("default",), role=ClusterSetRole.Role.VIEW, username="viewer")
    for index, cluster in enumerate(clusters):
        ClusterSetRoleFactory(
            cluster_set=ManagedClusterSetFactory(hub=hub, name=f"set-{index:02d}"), user=viewer
        )
        AddOnPlacementScoreFactory(hub=hub, namespace=cluster.name)
        RejectedObject.objects.create(
            hub=hub,
            kind="Placement",
            identity=cluster.name,
            namespace="default",
            name=cluster.name,
            reason="-",
        )
        HubFactory(name=f"west-{index:02d}")
        SyncRunFactory(hub=hub)
        AuditEntryFactory(of=cluster, actor=viewer)

    ocm = [
        PlacementFactory(hub=hub, name=f"ocm-{index:02d}", explanation=ocm_explanation_for(rows))
        for index in range(rows)
    ]
    for placement in ocm:
        PlacementDecisionFactory(placement=placement, clusters=names)
    crps = [
        PlacementFactory(
            hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace="", name=f"crp-{index:02d}"
        )
        for index in range(rows)
    ]
    for name in names:
        ClusterResourceBindingFactory(placement=crps[0], target=name)
    now = timezone.now()
    for placement in (ocm[0], crps[0]):
        for index, name in enumerate(names):
            PlacementEventFactory(placement=placement, at=now - timedelta(seconds=index))
            DecisionChangeFactory(placement=placement, at=now - timedelta(seconds=index), added=[name])
            AuditEntryFactory(of=placement)

    strategies = [StagedUpdateStrategyFactory(hub=hub, name=f"strategy-{index:02d}") for index in range(rows)]
    approvals = [approval_request(hub, f"r-{index:02d}", names) for index in range(rows)]
    return Seeded(
        superuser=UserFactory(username="root", is_superuser=True, is_staff=True),
        viewer=viewer,
        hub=hub,
        cluster=clusters[0],
        cluster_set=prod,
        ocm=ocm[0],
        crp=crps[0],
        strategy=strategies[0],
        run=approvals[0].run,
        approval=approvals[0],
    )


@dataclass(frozen=True)
class Page:
    """A page's path in a seeded fleet and the most queries it may make, for the superuser and the viewer
    (their role checks differ); the same bounds at every size."""

    path: Callable[[Seeded], str]
    superuser: int
    viewer: int


# Each bound counts the session and the user; the full pages' bounds also count the nav bar's approvals badge.
LISTS: dict[str, Page] = {
    # the overview: its ten cards read their first rows (and count them when there are more) and the hubs
    "home": Page(lambda s: "/", 25, 25),
    "hubs": Page(lambda s: "/hubs/", 5, 4),
    "clusters": Page(lambda s: f"/clusters/{ALL}", 8, 8),
    "cluster sets": Page(lambda s: f"/clustersets/{ALL}", 7, 7),
    "audit log": Page(lambda s: f"/audit/{ALL}", 7, 7),
    "rejected objects": Page(lambda s: f"/rejected/{ALL}", 6, 4),
    "placements": Page(lambda s: f"/placements/{ALL}", 6, 7),
    "runs": Page(lambda s: f"/runs/{ALL}", 6, 7),
    "strategies": Page(lambda s: f"/strategies/{ALL}", 7, 8),
    "approvals inbox": Page(lambda s: f"/approvals/{ALL}", 6, 7),
    "API clusters": Page(lambda s: f"/api/clusters/{ALL}", 6, 6),
    "API cluster sets": Page(lambda s: f"/api/cluster-sets/{ALL}", 5, 5),
    "API placements": Page(lambda s: f"/api/placements/{ALL}", 4, 4),
    "API approvals": Page(lambda s: f"/api/approvals/{ALL}", 4, 5),
    "API runs": Page(lambda s: f"/api/runs/{ALL}", 4, 4),
    "API strategies": Page(lambda s: f"/api/strategies/{ALL}", 4, 4),
}
DETAILS: dict[str, Page] = {
    "hub": Page(lambda s: f"/hubs/{s.hub.pk}/", 8, 7),
    "cluster": Page(lambda s: f"/clusters/{s.cluster.pk}/", 9, 10),
    "cluster set": Page(lambda s: f"/clustersets/{s.cluster_set.pk}/{ALL}", 11, 13),
    # a viewer's placement, on each of its tabs, is read by its key and then checked against their roles
    # (`access.visible_one`): one query more, and none that compiles the role rule
    "OCM placement": Page(lambda s: f"/placements/{s.ocm.pk}/", 5, 6),
    "Fleet placement": Page(lambda s: f"/placements/{s.crp.pk}/", 5, 6),
    "OCM scores": Page(lambda s: f"/placements/{s.ocm.pk}/scores/", 4, 5),
    "Fleet scores": Page(lambda s: f"/placements/{s.crp.pk}/scores/", 4, 5),
    "OCM what-if": Page(lambda s: f"/placements/{s.ocm.pk}/whatif/", 4, 5),
    "Fleet what-if": Page(lambda s: f"/placements/{s.crp.pk}/whatif/", 4, 5),
    "OCM rollout tab": Page(lambda s: f"/placements/{s.ocm.pk}/rollout/", 5, 6),
    "Fleet rollout tab": Page(lambda s: f"/placements/{s.crp.pk}/rollout/", 6, 7),
    "OCM history": Page(lambda s: f"/placements/{s.ocm.pk}/history/", 8, 9),
    "Fleet history": Page(lambda s: f"/placements/{s.crp.pk}/history/", 8, 9),
    "OCM YAML": Page(lambda s: f"/placements/{s.ocm.pk}/yaml/", 4, 5),
    "Fleet YAML": Page(lambda s: f"/placements/{s.crp.pk}/yaml/", 4, 5),
    "OCM rollout": Page(lambda s: f"/placements/{s.ocm.pk}/rollout/section/", 4, 5),
    "Fleet rollout": Page(lambda s: f"/placements/{s.crp.pk}/rollout/section/", 4, 5),
    "OCM tolerations": Page(lambda s: f"/placements/{s.ocm.pk}/tolerations/", 4, 5),
    "Fleet tolerations": Page(lambda s: f"/placements/{s.crp.pk}/tolerations/", 4, 5),
    "run": Page(lambda s: f"/runs/{s.run.pk}/", 7, 8),
    "API cluster": Page(lambda s: f"/api/clusters/{s.cluster.pk}/", 5, 5),
    "API cluster set": Page(lambda s: f"/api/cluster-sets/{s.cluster_set.pk}/", 4, 4),
    "API OCM placement": Page(lambda s: f"/api/placements/{s.ocm.pk}/", 3, 3),
    "API Fleet placement": Page(lambda s: f"/api/placements/{s.crp.pk}/", 3, 3),
    "API OCM rollout": Page(lambda s: f"/api/placements/{s.ocm.pk}/rollout/", 3, 3),
    "API Fleet rollout": Page(lambda s: f"/api/placements/{s.crp.pk}/rollout/", 4, 4),
    "API approval": Page(lambda s: f"/api/approvals/{s.approval.pk}/", 3, 4),
    "API run": Page(lambda s: f"/api/runs/{s.run.pk}/", 3, 3),
    "API strategy": Page(lambda s: f"/api/strategies/{s.strategy.pk}/", 3, 3),
}


@pytest.mark.parametrize("reader", ["superuser", "viewer"])
@pytest.mark.parametrize("rows", SIZES)
def test_every_page_answers_in_a_pinned_number_of_queries(
    db: None, client: Client, django_assert_max_num_queries: Callable[..., Any], rows: int, reader: str
) -> None:
    seeded = seed(rows)
    client.force_login(getattr(seeded, reader))
    for name, page in {**LISTS, **DETAILS}.items():
        path = page.path(seeded)
        with django_assert_max_num_queries(getattr(page, reader), info=f"{name}: GET {path}"):
            response = client.get(path)
        assert response.status_code == 200, f"{name}: GET {path}"


# A warm what-if (the hub's snapshot already built by an earlier one): the session, the user, the placement
# with its hub, the hub's inventory version and the placement's current decisions or bindings; for a
# viewer, the role check of the placement too (read by its key, then checked: `access.visible_one`).
WHATIF_QUERIES = {"superuser": 5, "viewer": 6}
NAMESPACE_SELECTOR = {"group": "", "version": "v1", "kind": "Namespace", "name": "web"}


@pytest.mark.parametrize("reader", ["superuser", "viewer"])
@pytest.mark.parametrize("rows", SIZES)
def test_a_warm_whatif_answers_in_a_pinned_number_of_queries(
    db: None, client: Client, django_assert_max_num_queries: Callable[..., Any], rows: int, reader: str
) -> None:
    service.forget_snapshots()
    seeded = seed(rows)
    Placement.objects.filter(pk=seeded.crp.pk).update(spec={"resourceSelectors": [NAMESPACE_SELECTOR]})
    client.force_login(getattr(seeded, reader))
    overrides = {
        seeded.ocm: {"numberOfClusters": 2},
        seeded.crp: {"policy": {"placementType": "PickN", "numberOfClusters": 2}},
    }
    for placement, override in overrides.items():
        path = f"/api/placements/{placement.pk}/whatif/"
        first = client.post(path, override, content_type="application/json")
        assert first.status_code == 200, (placement.kind, first.content)
        with django_assert_max_num_queries(WHATIF_QUERIES[reader], info=f"{placement.kind}: POST {path}"):
            response = client.post(path, override, content_type="application/json")
        assert response.status_code == 200, f"{placement.kind}: POST {path}"
