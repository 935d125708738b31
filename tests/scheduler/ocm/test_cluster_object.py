"""A ManagedCluster manifest reaches CEL as the Go type would give it back.

The expected objects were printed by upstream: the conformance oracle's admission (CRD defaults, then
the `cluster/v1` Go type) followed by sdk-go `ConvertObjectToUnstructured`, as ocm's `CELSelector`
does before it evaluates.
"""

from typing import Any

import pytest

from placement.scheduler.ocm.cel import compile_cel_selector
from placement.scheduler.ocm.cluster_object import typed_cluster_object
from placement.scheduler.ocm.manifests import parse_managed_cluster

API_VERSION = "cluster.open-cluster-management.io/v1"

FULL = {
    "apiVersion": API_VERSION,
    "kind": "ManagedCluster",
    "metadata": {
        "name": "c1",
        "labels": {"a": "b"},
        "annotations": {"x": "y"},
        "creationTimestamp": "2024-01-01T00:00:00Z",
    },
    "spec": {"hubAcceptsClient": True, "unknownField": 3},
    "status": {
        "allocatable": {"cpu": "1500m", "memory": "4096Mi", "x": "1e3", "y": "0.5Gi", "z": "1000000"},
        "capacity": {"cpu": 16, "memory": "1e9"},
        "clusterClaims": [{"name": "a", "value": "b"}],
        "version": {"kubernetes": "v1.29.9"},
        "conditions": [
            {
                "type": "ManagedClusterConditionAvailable",
                "status": "True",
                "reason": "R",
                "message": "m",
                "lastTransitionTime": "2025-05-01T19:54:00Z",
            }
        ],
    },
}
FULL_AS_GO = {
    "apiVersion": API_VERSION,
    "kind": "ManagedCluster",
    "metadata": {
        "annotations": {"x": "y"},
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "labels": {"a": "b"},
        "name": "c1",
    },
    "spec": {"hubAcceptsClient": True, "leaseDurationSeconds": 60},
    "status": {
        "allocatable": {"cpu": "1500m", "memory": "4Gi", "x": "1e3", "y": "512Mi", "z": "1M"},
        "capacity": {"cpu": "16", "memory": "1e9"},
        "clusterClaims": [{"name": "a", "value": "b"}],
        "conditions": [
            {
                "lastTransitionTime": "2025-05-01T19:54:00Z",
                "message": "m",
                "reason": "R",
                "status": "True",
                "type": "ManagedClusterConditionAvailable",
            }
        ],
        "version": {"kubernetes": "v1.29.9"},
    },
}

BARE = {"apiVersion": API_VERSION, "kind": "ManagedCluster", "metadata": {"name": "c2"}}
BARE_AS_GO = {
    "apiVersion": API_VERSION,
    "kind": "ManagedCluster",
    "metadata": {"name": "c2"},
    "spec": {"hubAcceptsClient": False},
    "status": {"conditions": None, "version": {}},
}

ZERO_VALUES = {
    "apiVersion": API_VERSION,
    "kind": "ManagedCluster",
    "metadata": {
        "name": "c3",
        "labels": {},
        "creationTimestamp": "2024-01-01T02:00:00.5+02:00",
        "finalizers": ["a"],
        "generation": 3,
    },
    "spec": {
        "managedClusterClientConfigs": [{"url": "https://x"}, {"caBundle": "aGVsbG8="}],
        "taints": [{"key": "k", "effect": "NoSelect"}],
        "leaseDurationSeconds": 0,
    },
    "status": {
        "capacity": {},
        "clusterClaims": [{"name": "a"}, {"value": "v"}],
        "version": {},
        "conditions": [
            {"type": "T", "status": "True"},
            {
                "type": "U",
                "status": "False",
                "observedGeneration": 2,
                "lastTransitionTime": "2025-05-01T19:54:00.123Z",
                "reason": "",
                "message": "",
            },
        ],
    },
}
ZERO_VALUES_AS_GO = {
    "apiVersion": API_VERSION,
    "kind": "ManagedCluster",
    "metadata": {
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "finalizers": ["a"],
        "generation": 3,
        "name": "c3",
    },
    "spec": {
        "hubAcceptsClient": False,
        "managedClusterClientConfigs": [{"url": "https://x"}, {"caBundle": "aGVsbG8=", "url": ""}],
        "taints": [{"effect": "NoSelect", "key": "k", "timeAdded": None}],
    },
    "status": {
        "clusterClaims": [{"name": "a"}, {"value": "v"}],
        "conditions": [
            {"lastTransitionTime": None, "message": "", "reason": "", "status": "True", "type": "T"},
            {
                "lastTransitionTime": "2025-05-01T19:54:00Z",
                "message": "",
                "observedGeneration": 2,
                "reason": "",
                "status": "False",
                "type": "U",
            },
        ],
        "version": {},
    },
}


@pytest.mark.parametrize(
    ("manifest", "as_go"), [(FULL, FULL_AS_GO), (BARE, BARE_AS_GO), (ZERO_VALUES, ZERO_VALUES_AS_GO)]
)
def test_typed_object_as_upstream_converts_it(manifest: dict[str, Any], as_go: dict[str, Any]) -> None:
    assert typed_cluster_object(manifest) == as_go


def test_cel_reads_the_typed_object_of_a_manifest() -> None:
    cluster = parse_managed_cluster(FULL, lambda message: None)
    selector = compile_cel_selector(
        [
            "managedCluster.status.allocatable.memory == '4Gi'",
            "managedCluster.status.capacity.cpu == '16'",
            "managedCluster.spec.leaseDurationSeconds == 60",
            "!has(managedCluster.spec.unknownField)",
        ]
    )
    assert selector.matches(cluster.to_unstructured(), lambda name: [])
