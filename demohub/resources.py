"""The kinds the demo hub serves: one `Resource` per (group, version, plural), as a CRD would declare it."""

from dataclasses import dataclass

OCM_GROUP = "cluster.open-cluster-management.io"
FLEET_CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT_GROUP = "placement.kubernetes-fleet.io"

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def qualified(self) -> str:
        """`plural.group`, the way the API server names a resource in error messages."""
        return f"{self.plural}.{self.group}"


RESOURCES: tuple[Resource, ...] = (
    Resource(OCM_GROUP, "v1", "managedclusters", "ManagedCluster", namespaced=False),
    Resource(OCM_GROUP, "v1beta2", "managedclustersets", "ManagedClusterSet", namespaced=False),
    Resource(OCM_GROUP, "v1beta2", "managedclustersetbindings", "ManagedClusterSetBinding", namespaced=True),
    Resource(OCM_GROUP, "v1beta1", "placements", "Placement", namespaced=True),
    Resource(OCM_GROUP, "v1beta1", "placementdecisions", "PlacementDecision", namespaced=True),
    Resource(OCM_GROUP, "v1alpha1", "addonplacementscores", "AddOnPlacementScore", namespaced=True),
    Resource(FLEET_CLUSTER_GROUP, "v1beta1", "memberclusters", "MemberCluster", namespaced=False),
    Resource(
        FLEET_PLACEMENT_GROUP, "v1beta1", "clusterresourceplacements", "ClusterResourcePlacement", False
    ),
    Resource(FLEET_PLACEMENT_GROUP, "v1beta1", "clusterresourcebindings", "ClusterResourceBinding", False),
    Resource(
        FLEET_PLACEMENT_GROUP,
        "v1beta1",
        "clusterstagedupdatestrategies",
        "ClusterStagedUpdateStrategy",
        False,
    ),
    Resource(FLEET_PLACEMENT_GROUP, "v1beta1", "clusterstagedupdateruns", "ClusterStagedUpdateRun", False),
    Resource(FLEET_PLACEMENT_GROUP, "v1beta1", "clusterapprovalrequests", "ClusterApprovalRequest", False),
)

BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}
BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES}


def groups() -> dict[str, list[str]]:
    """Each served group with its versions in registration order; the first is the preferred one."""
    out: dict[str, list[str]] = {}
    for resource in RESOURCES:
        versions = out.setdefault(resource.group, [])
        if resource.version not in versions:
            versions.append(resource.version)
    return out


def resources_in(group: str, version: str) -> list[Resource]:
    return [r for r in RESOURCES if r.group == group and r.version == version]
