"""The Argo CD ConfigMap that lets an ApplicationSet's clusterDecisionResource generator read the
PlacementDecisions this dashboard publishes."""

from typing import Any

from inventory.models import Hub
from placement.scheduler.ocm.decisions import API_VERSION

CONFIGMAP_NAME = "ocm-placement-generator"
ARGOCD_NAMESPACE = "argocd"


def argocd_configmap(hub: Hub, namespace: str = "") -> dict[str, Any]:
    """A v1 ConfigMap for Argo CD's namespace (which must be the hub's publish namespace: the generator
    lists decisions in its own namespace). `kind` is the plural resource name, in lower case."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIGMAP_NAME,
            "namespace": namespace or hub.publish_namespace or ARGOCD_NAMESPACE,
        },
        "data": {
            "apiVersion": API_VERSION,
            "kind": "placementdecisions",
            "statusListKey": "decisions",
            "matchKey": "clusterName",
        },
    }
