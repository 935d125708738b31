"""Hub objects created on the real hub as its admin, valid for the upstream CRD schemas, for the tests of
the dashboard's sync, watch, publishing and approvals.

`create` creates an object and writes its `status` through the status subresource (the API server drops
a status sent with a create). `seed_fleet` creates the demo hub's synthetic fleet (demohub.seed) on the
real hub, with the Fleet rollout objects built here: the demo seed's ClusterResourceBindings lack
`spec.resourceSnapshotName` and its ClusterStagedUpdateRun has `spec.state: Run`, which KubeFleet
v0.1.2's CRDs refuse (422). `hub_objects` answers what the hub holds, per kind, to compare the
dashboard's rows with.
"""

from __future__ import annotations

import datetime
from typing import Any

import kubernetes

from demohub.seed import fleet_objects
from inventory.hubclient import FLEET_PLACEMENT_GROUP, KINDS, KINDS_BY_NAME, OCM_GROUP, Kind
from inventory.kinds import HANDLERS
from inventory.models import Hub, Owner

FLEET_V1BETA1 = f"{FLEET_PLACEMENT_GROUP}/v1beta1"
# built here, not taken from the demo seed (see the module docstring)
ROLLOUT_KINDS = {"ClusterResourceBinding", "ClusterStagedUpdateRun"}
CRP_LABEL = "kubernetes-fleet.io/parent-CRP"


def _kind(obj: dict[str, Any]) -> Kind:
    return KINDS_BY_NAME[obj["kind"]]


def _where(kind: Kind, namespace: str | None) -> tuple[str, ...]:
    return (
        (kind.group, kind.version, namespace, kind.plural)
        if namespace
        else (kind.group, kind.version, kind.plural)
    )


def create(client: kubernetes.client.ApiClient, obj: dict[str, Any]) -> dict[str, Any]:
    """Create `obj` (metadata: name, namespace, labels, annotations only), then its status; answers the
    object as the hub holds it afterwards."""
    api = kubernetes.client.CustomObjectsApi(client)
    kind, metadata = _kind(obj), obj["metadata"]
    namespace = metadata.get("namespace")
    body = {
        **{key: value for key, value in obj.items() if key != "status"},
        "metadata": {k: metadata[k] for k in ("name", "namespace", "labels", "annotations") if k in metadata},
    }
    if namespace:
        created = api.create_namespaced_custom_object(*_where(kind, namespace), body)
    else:
        created = api.create_cluster_custom_object(*_where(kind, None), body)
    if "status" not in obj:
        return dict(created)
    return patch(client, obj["kind"], metadata["name"], {"status": obj["status"]}, namespace, status=True)


def patch(
    client: kubernetes.client.ApiClient,
    kind_name: str,
    name: str,
    body: dict[str, Any],
    namespace: str | None = None,
    *,
    status: bool = False,
) -> dict[str, Any]:
    """A JSON merge patch of the object (or its status subresource) as the admin."""
    api = kubernetes.client.CustomObjectsApi(client)
    kind = KINDS_BY_NAME[kind_name]
    if namespace:
        call = api.patch_namespaced_custom_object_status if status else api.patch_namespaced_custom_object
    else:
        call = api.patch_cluster_custom_object_status if status else api.patch_cluster_custom_object
    return dict(call(*_where(kind, namespace), name, body))


def get(
    client: kubernetes.client.ApiClient, kind_name: str, name: str, namespace: str | None = None
) -> dict[str, Any]:
    """The object as the hub holds it, read as the admin."""
    api = kubernetes.client.CustomObjectsApi(client)
    kind = KINDS_BY_NAME[kind_name]
    if namespace:
        return dict(api.get_namespaced_custom_object(*_where(kind, namespace), name))
    return dict(api.get_cluster_custom_object(*_where(kind, None), name))


def delete(
    client: kubernetes.client.ApiClient, kind_name: str, name: str, namespace: str | None = None
) -> None:
    api = kubernetes.client.CustomObjectsApi(client)
    kind = KINDS_BY_NAME[kind_name]
    if namespace:
        api.delete_namespaced_custom_object(*_where(kind, namespace), name)
    else:
        api.delete_cluster_custom_object(*_where(kind, None), name)


def ensure_namespace(client: kubernetes.client.ApiClient, name: str) -> None:
    try:
        kubernetes.client.CoreV1Api(client).create_namespace({"metadata": {"name": name}})
    except kubernetes.client.ApiException as exc:
        if exc.status != 409:  # it exists (the session's hub is shared)
            raise


def cluster_set(name: str) -> dict[str, Any]:
    """A ManagedClusterSet of the clusters labelled with its name (the default selector)."""
    return {
        "apiVersion": f"{OCM_GROUP}/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": name},
        "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}},
    }


def set_binding(namespace: str, cluster_set: str) -> dict[str, Any]:
    """A ManagedClusterSetBinding of `cluster_set` to `namespace` (named after the set, as OCM requires)."""
    return {
        "apiVersion": f"{OCM_GROUP}/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"name": cluster_set, "namespace": namespace},
        "spec": {"clusterSet": cluster_set},
    }


def resource_binding(placement: str, cluster: str) -> dict[str, Any]:
    """A ClusterResourceBinding as KubeFleet's scheduler leaves it: Scheduled on `cluster`."""
    return {
        "apiVersion": FLEET_V1BETA1,
        "kind": "ClusterResourceBinding",
        "metadata": {"name": f"{placement}-{cluster}", "labels": {CRP_LABEL: placement}},
        "spec": {
            "state": "Scheduled",
            "targetCluster": cluster,
            "resourceSnapshotName": f"{placement}-0-snapshot",
            "schedulingPolicySnapshotName": f"{placement}-0",
            "clusterDecision": {
                "clusterName": cluster,
                "selected": True,
                "reason": "picked by scheduling policy",
            },
        },
    }


def staged_update_run(name: str, placement: str, strategy: str) -> dict[str, Any]:
    """A ClusterStagedUpdateRun set to Execute (v0.1.2's states: Initialize, Execute, Pause, Abandon)."""
    return {
        "apiVersion": FLEET_V1BETA1,
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": name},
        "spec": {
            "placementName": placement,
            "resourceSnapshotIndex": "0",
            "stagedRolloutStrategyName": strategy,
            "state": "Execute",
        },
    }


def waiting_status(stage: str, clusters: list[str], request: str, now: datetime.datetime) -> dict[str, Any]:
    """A run's status as KubeFleet's update-run controller writes it once `stage` is updated and its
    after-stage Approval task has created the request `request`."""
    at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    created = {
        "type": "ApprovalRequestCreated",
        "status": "True",
        "reason": "AfterStageTaskApprovalRequestCreated",
        "message": "",
        "lastTransitionTime": at,
        "observedGeneration": 1,
    }
    return {
        "stagesStatus": [
            {
                "stageName": stage,
                "clusters": [{"clusterName": cluster} for cluster in clusters],
                "afterStageTaskStatus": [
                    {"type": "Approval", "approvalRequestName": request, "conditions": [created]}
                ],
            }
        ]
    }


def approval_request(name: str, run: str, stage: str) -> dict[str, Any]:
    """A ClusterApprovalRequest as the update-run controller creates it for an after-stage task."""
    return {
        "apiVersion": FLEET_V1BETA1,
        "kind": "ClusterApprovalRequest",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes-fleet.io/targetupdaterun": run,
                "kubernetes-fleet.io/targetUpdatingStage": stage,
                "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
                "kubernetes-fleet.io/taskType": "afterStage",
            },
        },
        "spec": {"parentStageRollout": run, "targetStage": stage},
    }


def seed_fleet(
    client: kubernetes.client.ApiClient, clusters: int, seed: int
) -> dict[str, list[dict[str, Any]]]:
    """The demo hub's synthetic fleet of `clusters` clusters (OCM and Fleet) created on the hub, and a
    staged update run of its first Fleet placement waiting for the approval of its first stage; answers
    the objects as the hub holds them, per kind."""
    now = datetime.datetime.now(datetime.UTC)
    objects = [
        o for o in fleet_objects(clusters, fleet=True, seed=seed, now=now) if o["kind"] not in ROLLOUT_KINDS
    ]
    for namespace in sorted({o["metadata"]["namespace"] for o in objects if o["metadata"].get("namespace")}):
        ensure_namespace(client, namespace)
    members = [o["metadata"]["name"] for o in objects if o["kind"] == "MemberCluster"]
    placement = next(o["metadata"]["name"] for o in objects if o["kind"] == "ClusterResourcePlacement")
    strategy = next(o for o in objects if o["kind"] == "ClusterStagedUpdateStrategy")
    stage = strategy["spec"]["stages"][0]["name"]
    staged = members[:3]
    run, request = f"{placement}-run", f"{placement}-run-{stage}"
    objects += [
        *(resource_binding(placement, member) for member in staged),
        {
            **staged_update_run(run, placement, strategy["metadata"]["name"]),
            "status": waiting_status(stage, staged, request, now),
        },
        approval_request(request, run, stage),
    ]
    created: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        created.setdefault(obj["kind"], []).append(create(client, obj))
    return created


def hub_objects(client: kubernetes.client.ApiClient) -> dict[str, set[tuple[str, str]]]:
    """Every object of the kinds the dashboard syncs, as (namespace, name) per kind."""
    api = kubernetes.client.CustomObjectsApi(client)
    return {
        kind.name: {
            (item["metadata"].get("namespace", ""), item["metadata"]["name"])
            for item in api.list_cluster_custom_object(kind.group, kind.version, kind.plural)["items"]
        }
        for kind in KINDS
    }


def dashboard_objects(hub: Hub) -> dict[str, set[tuple[str, str]]]:
    """Every row the dashboard mirrored from `hub` (dashboard-owned rows left out), as (namespace, name)
    per kind: what `hub_objects` answers when the two agree."""
    mirrored = {}
    for kind in KINDS:
        handler = HANDLERS[(kind.group, kind.name)]
        rows = handler.model._default_manager.filter(hub=hub, **handler.scope)
        if any(field.name == "owner" for field in handler.model._meta.concrete_fields):
            rows = rows.filter(owner=Owner.HUB)
        fields = ("namespace", "name") if handler.namespaced else ("name",)
        mirrored[kind.name] = {
            (values[0], values[1]) if handler.namespaced else ("", values[0])
            for values in rows.values_list(*fields)
        }
    return mirrored
