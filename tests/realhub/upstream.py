"""The upstream OCM placement controller (open-cluster-management.io/ocm/cmd/placement) on the real hub.

`PlacementController(hub).start_on(client)` writes an admin kubeconfig into its directory, creates the
namespace it records its own events in, and runs `placement controller` against the hub as a child
process (its log in the hub's directory, beside etcd's and kube-apiserver's), without leader election:
it is the only replica, and a lease would only delay its start. It is running once its informers have
synced, which it logs. `stop()` ends it and waits for it.

`converge(client, controller)` waits until the controller's decisions are a fixed point: every Placement
is handed to it again (an annotation written) until a round changes no PlacementDecision. Balance scores a
cluster by the decisions of every other placement, and the controller schedules a placement only when
something it watches for that placement changes, so after a burst of changes a placement may hold what
it decided before the others moved; a fixed point is what a scheduler given the final state decides.
`upstream_decisions(client)` reads what it decided, in the form the dashboard's explanation has it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes

from tests.realhub.controllers import Controller
from tests.servers import free_port

GROUP = "cluster.open-cluster-management.io"
CLUSTERS = (GROUP, "v1", "managedclusters")
CLUSTER_SETS = (GROUP, "v1beta2", "managedclustersets")
SET_BINDINGS = (GROUP, "v1beta2", "managedclustersetbindings")
PLACEMENTS = (GROUP, "v1beta1", "placements")
DECISIONS = (GROUP, "v1beta1", "placementdecisions")
SCORES = (GROUP, "v1alpha1", "addonplacementscores")
PLACEMENT_LABEL = f"{GROUP}/placement"
SATISFIED = "PlacementSatisfied"

# where library-go's controller command records the controller's own events (the placements' events go
# to each placement's namespace); the namespace an OCM hub runs its controllers in
CONTROLLER_NAMESPACE = "open-cluster-management-hub"
# the scheduling controller logs this once its informers hold the hub's objects (library-go's
# base_controller): from then on every placement it is handed is scheduled
SYNCED_LINE = "Caches are synced for SchedulingController"

# no write for this long: the controller has scheduled everything it was handed
QUIET_SECONDS = 2.0
SETTLE_TIMEOUT = 60.0
CONVERGE_ROUNDS = 6
NUDGE_ANNOTATION = "fleetui.test/nudge"


def ensure_namespace(client: kubernetes.client.ApiClient, name: str) -> None:
    """Create the namespace unless it exists (the session's hub outlives every test)."""
    core = kubernetes.client.CoreV1Api(client)
    try:
        core.create_namespace(
            kubernetes.client.V1Namespace(metadata=kubernetes.client.V1ObjectMeta(name=name))
        )
    except kubernetes.client.ApiException as exc:
        if exc.status != 409:
            raise


class PlacementController(Controller):
    """The OCM placement controller of one real hub, a child process logging into its directory."""

    name = "placement"

    def start_on(self, client: kubernetes.client.ApiClient) -> PlacementController:
        """Started, once the namespace it records its own events in exists."""
        ensure_namespace(client, CONTROLLER_NAMESPACE)
        return self.start()

    def command(self, kubeconfig: Path) -> list[str]:
        return [
            "controller",
            f"--kubeconfig={kubeconfig}",
            f"--namespace={CONTROLLER_NAMESPACE}",
            "--disable-leader-election",
            # its health and debug endpoints, on loopback only
            f"--listen=127.0.0.1:{free_port()}",
        ]

    def environment(self) -> dict[str, str]:
        # without a serving certificate, library-go writes a self-signed one into a temporary directory
        # it never removes: keep that in the controller's directory, which the session removes
        return {**os.environ, "TMPDIR": str(self.directory)}

    def ready(self) -> bool:
        return self.log.exists() and SYNCED_LINE in self.log.read_text(errors="replace")


@dataclass(frozen=True)
class Decided:
    """What one placement decided: its clusters, its decision groups as status.decisionGroups lists
    them (index, name, PlacementDecision names, cluster count) with the clusters of each group, and its
    status conditions (type, status, reason, message)."""

    clusters: frozenset[str]
    groups: tuple[tuple[int, str, tuple[str, ...], int, frozenset[str]], ...]
    conditions: tuple[tuple[str, str, str, str], ...]

    def __str__(self) -> str:
        groups = "; ".join(
            f"#{index} {name!r} {list(pages)} count {count}: {sorted(members)}"
            for index, name, pages, count, members in self.groups
        )
        return f"{sorted(self.clusters)} groups {groups} conditions {list(self.conditions)}"


def _items(client: kubernetes.client.ApiClient, resource: tuple[str, str, str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubernetes.client.CustomObjectsApi(client).list_cluster_custom_object(
        *resource
    )["items"]
    return items


def decided(
    pages: list[dict[str, Any]], groups: list[dict[str, Any]], conditions: list[dict[str, Any]]
) -> Decided:
    """A placement's decision from its PlacementDecision objects, status.decisionGroups and
    status.conditions."""
    clusters = {
        page["metadata"]["name"]: [
            entry["clusterName"] for entry in (page.get("status") or {}).get("decisions") or []
        ]
        for page in pages
    }
    return Decided(
        frozenset(name for names in clusters.values() for name in names),
        tuple(
            (
                int(group.get("decisionGroupIndex", 0)),
                str(group.get("decisionGroupName", "")),
                tuple(group.get("decisions") or ()),
                int(group.get("clusterCount", 0)),
                frozenset(name for page in group.get("decisions") or () for name in clusters.get(page, ())),
            )
            for group in groups
        ),
        tuple(
            sorted(
                (str(c.get("type")), str(c.get("status")), str(c.get("reason")), str(c.get("message")))
                for c in conditions
            )
        ),
    )


def upstream_decisions(client: kubernetes.client.ApiClient) -> dict[tuple[str, str], Decided]:
    """(namespace, name) -> what the controller decided, from its PlacementDecisions and the Placement's
    status."""
    pages: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for page in _items(client, DECISIONS):
        metadata = page["metadata"]
        pages.setdefault(
            (metadata["namespace"], metadata.get("labels", {}).get(PLACEMENT_LABEL, "")), []
        ).append(page)
    decisions = {}
    for placement in _items(client, PLACEMENTS):
        key = (placement["metadata"]["namespace"], placement["metadata"]["name"])
        status = placement.get("status") or {}
        decisions[key] = decided(
            pages.get(key, []), status.get("decisionGroups") or [], status.get("conditions") or []
        )
    return decisions


def _state(client: kubernetes.client.ApiClient) -> tuple[tuple[tuple[str, ...], ...], bool]:
    """The resourceVersion of every Placement and PlacementDecision (it moves with every write), and
    whether every Placement has been scheduled (holds the PlacementSatisfied condition upstream sets on
    its first run: the controller sets no observedGeneration to wait for)."""
    placements, pages = _items(client, PLACEMENTS), _items(client, DECISIONS)
    versions = tuple(
        sorted(
            (
                item["kind"],
                item["metadata"]["namespace"],
                item["metadata"]["name"],
                item["metadata"]["resourceVersion"],
            )
            for item in placements + pages
        )
    )
    scheduled = all(
        any(c.get("type") == SATISFIED for c in (p.get("status") or {}).get("conditions") or [])
        for p in placements
    )
    return versions, scheduled


def settle(client: kubernetes.client.ApiClient, controller: PlacementController) -> None:
    """Wait until every Placement has been scheduled and none of them or their PlacementDecisions has
    been written for QUIET_SECONDS."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    (last, scheduled), since = _state(client), time.monotonic()
    while not scheduled or time.monotonic() - since < QUIET_SECONDS:
        controller.check_alive()
        if time.monotonic() > deadline:
            raise AssertionError(
                f"placements still changing after {SETTLE_TIMEOUT:g} s:\n{controller.tail()}"
            )
        time.sleep(0.2)
        current, scheduled = _state(client)
        if current != last:
            last, since = current, time.monotonic()


def nudge(client: kubernetes.client.ApiClient, round_: int) -> None:
    """Hand every Placement to the controller again: any update of one queues it."""
    objects = kubernetes.client.CustomObjectsApi(client)
    for placement in _items(client, PLACEMENTS):
        metadata = placement["metadata"]
        patch = {"metadata": {"annotations": {NUDGE_ANNOTATION: str(round_)}}}
        objects.patch_namespaced_custom_object(
            *PLACEMENTS[:2], metadata["namespace"], PLACEMENTS[2], metadata["name"], patch
        )


def converge(
    client: kubernetes.client.ApiClient, controller: PlacementController
) -> dict[tuple[str, str], Decided]:
    """Settle, then nudge every placement until a round changes no decision; answers the decisions."""
    settle(client, controller)
    decided = upstream_decisions(client)
    for round_ in range(1, CONVERGE_ROUNDS + 1):
        nudge(client, round_)
        settle(client, controller)
        again = upstream_decisions(client)
        if again == decided:
            return decided
        decided = again
    raise AssertionError(f"the controller's decisions did not settle within {CONVERGE_ROUNDS} rounds")
