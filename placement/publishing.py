"""Publish dashboard-owned OCM decisions to the hub as PlacementDecision objects (integrations §2).

Into `Hub.publish_namespace`, named and labelled exactly as upstream does (`<placement>-decision-<N>`,
the placement / decision-group-name / decision-group-index labels, plus the dashboard's managed-by
label), so Argo CD's clusterDecisionResource generator and KubeVela read them unchanged. Status is a
subresource: create, then patch status. Objects labelled with the placement that are no longer
decided are deleted.
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inventory.hubclient import HubClient
from placement.hubbindings import MANAGED_BY, MANAGED_BY_LABEL
from placement.models import PLACEMENT_LABEL, Owner, Placement
from placement.scheduler.ocm.decisions import API_VERSION

logger = logging.getLogger(__name__)

# Argo CD and KubeVela select by the placement label and ignore others; the sync skips objects
# carrying this one, so the published copies are not mirrored back and counted a second time.
MANAGED = {MANAGED_BY_LABEL: MANAGED_BY}


@dataclass
class PublishReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"created": len(self.created), "updated": len(self.updated), "deleted": len(self.deleted)}


def _entries(decisions: list[Any]) -> list[dict[str, str]]:
    # Argo CD copies every key of an entry into template parameters as a string
    return [
        {"clusterName": str(d.get("clusterName", "")), "reason": str(d.get("reason") or "")}
        for d in decisions
        if isinstance(d, Mapping)
    ]


def desired_objects(placement: Placement) -> list[dict[str, Any]]:
    """The PlacementDecision objects the publish namespace should hold for `placement`."""
    namespace = placement.hub.publish_namespace
    return [
        {
            "apiVersion": API_VERSION,
            "kind": "PlacementDecision",
            "metadata": {"name": row.name, "namespace": namespace, "labels": {**row.labels, **MANAGED}},
            "status": {"decisions": _entries(row.decisions)},
        }
        for row in placement.decisions.filter(owner=Owner.DASHBOARD).order_by("name")
    ]


def publish_placement(placement: Placement) -> PublishReport:
    """Make the hub's publish namespace hold exactly the placement's decisions; raises HubError."""
    report = PublishReport()
    namespace = placement.hub.publish_namespace
    if not namespace or placement.owner != Owner.DASHBOARD or not placement.is_ocm:
        return report
    desired = desired_objects(placement)
    with HubClient(placement.hub) as client:
        found = client.list_placement_decisions(namespace, f"{PLACEMENT_LABEL}={placement.name}")
        existing = {obj["metadata"]["name"]: obj for obj in found}
        for obj in desired:
            name = obj["metadata"]["name"]
            current = existing.get(name)
            if current is None:
                client.create_placement_decision(namespace, {k: v for k, v in obj.items() if k != "status"})
                report.created.append(name)
                current = {"metadata": obj["metadata"], "status": {}}
            elif (current["metadata"].get("labels") or {}) != obj["metadata"]["labels"]:
                client.patch_placement_decision(
                    namespace, name, {"metadata": {"labels": obj["metadata"]["labels"]}}
                )
                report.updated.append(name)
            if _entries((current.get("status") or {}).get("decisions") or []) != obj["status"]["decisions"]:
                client.patch_placement_decision(namespace, name, {"status": obj["status"]}, status=True)
                if name not in report.created + report.updated:
                    report.updated.append(name)
        wanted = {obj["metadata"]["name"] for obj in desired}
        for name in sorted(set(existing) - wanted):
            client.delete_placement_decision(namespace, name)
            report.deleted.append(name)
    logger.info(
        "published %s to hub %s namespace %s: %s", placement, placement.hub, namespace, report.counts()
    )
    return report
