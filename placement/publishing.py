"""Publish dashboard-owned OCM decisions to the hub as PlacementDecision objects.

Into `Hub.publish_namespace`, named and labelled exactly as upstream does (`<placement>-decision-<N>`,
the placement / decision-group-name / decision-group-index labels, plus the dashboard's managed-by
label), so Argo CD's clusterDecisionResource generator and KubeVela read them unchanged. Status is a
subresource: create, then patch status. Objects labelled with the placement that are no longer
decided are deleted. Every update goes through `inventory.hubwrites`: a concurrent writer's change is
kept and ours re-applied to it.
"""

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from inventory.hubclient import HubClient, HubError
from inventory.hubwrites import Written, update_with_retry
from inventory.objects import MANAGED_BY, MANAGED_BY_LABEL
from placement.history import record_events
from placement.models import PLACEMENT_LABEL, Owner, Placement, PlacementEvent
from placement.scheduler.ocm.decisions import API_VERSION

logger = logging.getLogger(__name__)

# Argo CD and KubeVela select by the placement label and ignore others; the sync skips objects
# carrying this one, so the published copies are not mirrored back and counted a second time.
MANAGED = {MANAGED_BY_LABEL: MANAGED_BY}
KIND = "PlacementDecision"
# The placement's events saying how its last publishing went (the page header and the API show the newest).
PUBLISHED, PUBLISH_FAILED = "DecisionsPublished", "PublishFailed"
# A hub's error text is the hub's to choose: an event keeps this much of it.
ERROR_LIMIT = 2_000


@dataclass
class PublishReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # objects whose writes met a 409 Conflict and were re-applied to the fresh copy (once per conflict)
    conflicts: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "deleted": len(self.deleted),
            "conflicts": len(self.conflicts),
        }


def _entries(decisions: list[Any]) -> list[dict[str, str]]:
    # Argo CD copies every key of an entry into template parameters as a string
    return [
        {"clusterName": str(d.get("clusterName", "")), "reason": str(d.get("reason") or "")}
        for d in decisions
        if isinstance(d, Mapping)
    ]


def _labels_patch(desired: Mapping[str, Any], obj: Mapping[str, Any]) -> dict[str, Any] | None:
    labels = desired["metadata"]["labels"]
    return None if (obj["metadata"].get("labels") or {}) == labels else {"metadata": {"labels": labels}}


def _decisions_patch(desired: Mapping[str, Any], obj: Mapping[str, Any]) -> dict[str, Any] | None:
    # only `decisions` is ours: a merge patch keeps whatever else another writer put in the status
    decisions = desired["status"]["decisions"]
    if _entries((obj.get("status") or {}).get("decisions") or []) == decisions:
        return None
    return {"status": {"decisions": decisions}}


def _write(
    client: HubClient,
    desired: Mapping[str, Any],
    current: dict[str, Any],
    patch: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any] | None],
    report: PublishReport,
    subresource: str | None = None,
) -> Written:
    metadata = desired["metadata"]
    written = update_with_retry(
        client,
        KIND,
        metadata["name"],
        lambda obj: patch(desired, obj),
        namespace=metadata["namespace"],
        subresource=subresource,
        current=current,
    )
    report.conflicts += [metadata["name"]] * written.conflicts
    return written


def desired_objects(placement: Placement) -> list[dict[str, Any]]:
    """The PlacementDecision objects the publish namespace should hold for `placement`."""
    namespace = placement.hub.publish_namespace
    return [
        {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": row.name, "namespace": namespace, "labels": {**row.labels, **MANAGED}},
            "status": {"decisions": _entries(row.decisions)},
        }
        for row in placement.decisions.filter(owner=Owner.DASHBOARD).order_by("name")
    ]


def publishes(placement: Placement) -> bool:
    """Whether the placement's decisions go to its hub: dashboard-owned OCM ones of a hub with a publish
    namespace."""
    owned = placement.owner == Owner.DASHBOARD
    return owned and placement.family.publishes_decisions and bool(placement.hub.publish_namespace)


def publish_placement(placement: Placement) -> PublishReport:
    """Make the hub's publish namespace hold exactly the placement's decisions; raises HubError."""
    report = PublishReport()
    if not publishes(placement):
        return report
    namespace = placement.hub.publish_namespace
    desired = desired_objects(placement)
    with HubClient(placement.hub) as client:
        found = client.list_placement_decisions(namespace, f"{PLACEMENT_LABEL}={placement.name}")
        existing = {obj["metadata"]["name"]: obj for obj in found}
        for obj in desired:
            name = obj["metadata"]["name"]
            current = existing.get(name)
            if current is None:
                current = client.create_placement_decision(
                    namespace, {k: v for k, v in obj.items() if k != "status"}
                )
                report.created.append(name)
            labels = _write(client, obj, current, _labels_patch, report)
            decisions = _write(client, obj, labels.obj, _decisions_patch, report, "status")
            if (labels.written or decisions.written) and name not in report.created + report.updated:
                report.updated.append(name)
        wanted = {obj["metadata"]["name"] for obj in desired}
        for name in sorted(set(existing) - wanted):
            client.delete_placement_decision(namespace, name)
            report.deleted.append(name)
    logger.info(
        "published %s to hub %s namespace %s: %s", placement, placement.hub, namespace, report.counts()
    )
    return report


def record_published(placement: Placement, report: PublishReport) -> None:
    """A Normal event: the decisions are on the hub, with what it took."""
    counts = ", ".join(f"{key} {value}" for key, value in report.counts().items())
    message = f"to namespace {placement.hub.publish_namespace} of hub {placement.hub.name}: {counts}"
    record_events(placement, [{"reason": PUBLISHED, "message": message}], timezone.now())


def record_failure(placement: Placement, error: HubError, *, retrying: bool) -> None:
    """A Warning event with the hub's reason, so the failure is on the placement's page and not only in the
    worker's log."""
    then = "; trying again later" if retrying else ""
    message = f"to hub {placement.hub.name}: {str(error)[:ERROR_LIMIT]}{then}"
    event = {"type": PlacementEvent.Type.WARNING, "reason": PUBLISH_FAILED, "message": message}
    record_events(placement, [event], timezone.now())


def last_outcome(placement: Placement) -> PlacementEvent | None:
    """The newest publishing event of a placement that publishes (None otherwise, or before its first)."""
    if not publishes(placement):
        return None
    return placement.events.filter(reason__in=(PUBLISHED, PUBLISH_FAILED)).first()
