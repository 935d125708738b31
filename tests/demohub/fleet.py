"""Shared by the demo hub controller tests: a frozen-clock hub, the real client on it, Fleet objects."""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes.client import ApiClient, Configuration, CustomObjectsApi

from demohub import Clock, DemoHub
from demohub.resources import BY_KIND

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
TIMEOUT = 10  # seconds; a hung request fails the test instead of hanging it
PARENT_CRP = "kubernetes-fleet.io/parent-CRP"


@contextmanager
def frozen_hub(**options: Any) -> Iterator[DemoHub]:
    """A Fleet demo hub with its controllers, stepped only by the test (no background ticks)."""
    options = {"clusters": 0, "fleet": True, "controllers": True, "controller_seconds": 0, **options}
    with DemoHub(clock=Clock.frozen(NOW), **options) as hub:
        yield hub


def stamp(seconds: float) -> str:
    """The RFC 3339 time `seconds` after NOW, as the hub writes it."""
    return (NOW + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


class FleetClient:
    """The official `kubernetes` client on a demo hub, addressed by kind for brevity."""

    def __init__(self, hub: DemoHub) -> None:
        self.api = CustomObjectsApi(ApiClient(Configuration(host=hub.url)))

    def _path(self, kind: str) -> tuple[str, str, str]:
        resource = BY_KIND[kind]
        return resource.group, resource.version, resource.plural

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.api.create_cluster_custom_object(*self._path(obj["kind"]), obj, _request_timeout=TIMEOUT)

    def get(self, kind: str, name: str) -> dict[str, Any]:
        return self.api.get_cluster_custom_object(*self._path(kind), name, _request_timeout=TIMEOUT)

    def list(self, kind: str, **options: Any) -> dict[str, Any]:
        return self.api.list_cluster_custom_object(*self._path(kind), _request_timeout=TIMEOUT, **options)

    def patch(self, kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.api.patch_cluster_custom_object(*self._path(kind), name, body, _request_timeout=TIMEOUT)

    def patch_status(self, kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.api.patch_cluster_custom_object_status(
            *self._path(kind), name, body, _request_timeout=TIMEOUT
        )

    def delete(self, kind: str, name: str) -> dict[str, Any]:
        return self.api.delete_cluster_custom_object(*self._path(kind), name, _request_timeout=TIMEOUT)


def condition(obj: Mapping[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The condition of type `kind` in `obj["status"]["conditions"]` (or in `obj["conditions"]`)."""
    holder = (obj or {}).get("status", obj) or {}
    return next((c for c in holder.get("conditions") or () if c["type"] == kind), None)


def summary(obj: Mapping[str, Any] | None, kind: str) -> tuple[str, str] | None:
    """(status, reason) of a condition, the part most assertions are about."""
    found = condition(obj, kind)
    return (found["status"], found["reason"]) if found else None


def member(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"identity": {"kind": "ServiceAccount", "name": "fleet-member-agent-sa"}},
    }


def placement(name: str, clusters: list[str], **annotations: str) -> dict[str, Any]:
    """An externally rolled-out PickFixed placement of the namespace `name`."""
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": name}],
            "policy": {"placementType": "PickFixed", "clusterNames": clusters},
            "strategy": {"type": "External"},
        },
    }


def binding(placement_name: str, cluster: str, state: str = "Scheduled", **spec: Any) -> dict[str, Any]:
    """A binding as the scheduler writes it (policy snapshot `<crp>-0`), plus any `spec` fields."""
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourceBinding",
        "metadata": {"name": f"{placement_name}-{cluster}", "labels": {PARENT_CRP: placement_name}},
        "spec": {
            "state": state,
            "targetCluster": cluster,
            "schedulingPolicySnapshotName": f"{placement_name}-0",
            "clusterDecision": {"clusterName": cluster, "selected": True, "reason": "picked"},
            **spec,
        },
    }
