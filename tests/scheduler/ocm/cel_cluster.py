"""The ManagedCluster the CEL tests evaluate against, as upstream's expected results were produced on it,
and the check they make of an expression against upstream's result."""

import pytest

from placement.scheduler.ocm.cel import CelCompileError, compile_cel_selector

CLUSTER = {
    "apiVersion": "cluster.open-cluster-management.io/v1",
    "kind": "ManagedCluster",
    "metadata": {
        "name": "cluster1",
        "labels": {
            "region": "us-east-1",
            "env": "prod",
            "version": "1.30.2",
            "ip": "10.0.0.5",
            "api": "https://api.c1.example.com:6443/v1/x?a=1&a=2&b=%20c",
        },
    },
    "spec": {"hubAcceptsClient": True},
    "status": {
        "version": {"kubernetes": "v1.30.2"},
        "clusterClaims": [{"name": "platform.open-cluster-management.io", "value": "AWS"}],
    },
}


def no_scores(resource_name: str) -> list[dict[str, object]]:
    """The cluster has no AddOnPlacementScores: `scores()` is an error, as with upstream's nil lister."""
    raise LookupError(resource_name)


def assert_as_upstream(
    expression: str, expected: bool | None, refused: str | None = None, cluster: dict[str, object] = CLUSTER
) -> None:
    """`expected` None: upstream refuses the expression when the selector is built (its message matching
    `refused` when given); else whether it matches `cluster`, which has no scores."""
    if expected is None:
        with pytest.raises(CelCompileError, match=refused):
            compile_cel_selector([expression])
        return
    assert compile_cel_selector([expression]).matches(cluster, no_scores) is expected
