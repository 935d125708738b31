"""Decision groups, PlacementDecision pages and the bind plan of one Placement reconcile.

upstream: ocm `pkg/placement/controllers/scheduling/scheduling_controller.go`
(`calculateLength`, `generateDecisionGroups`, `generateDecision`, `bind`, `createOrUpdatePlacementDecision`).
Covers decision groups and pages, and the binding with its events. Nothing here writes to a
hub: `plan_bind` returns the API calls and events the controller would make, in its order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from placement.scheduler.errors import ManifestError, in_range
from placement.scheduler.intstr import ceil_percent_of
from placement.scheduler.labels import (
    LabelSelector,
    Requirement,
    SelectorError,
    SelectorProblem,
    parse_stored_label_selector,
    parse_stored_requirements,
)
from placement.scheduler.ocm.status import WARNING, ScheduleStatus

API_VERSION = "cluster.open-cluster-management.io/v1beta1"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
DECISION_GROUP_NAME_LABEL = "cluster.open-cluster-management.io/decision-group-name"
DECISION_GROUP_INDEX_LABEL = "cluster.open-cluster-management.io/decision-group-index"

MAX_CLUSTERS_PER_DECISION = 100  # upstream maxNumOfClusterDecisions
MAX_EVENT_MESSAGE_LENGTH = 1000  # upstream maxEventMessageLength (events allow 1024)
DEFAULT_CLUSTERS_PER_DECISION_GROUP = "100%"  # CRD default

CREATE, PATCH_STATUS, PATCH_LABELS, DELETE = "create", "patch-status", "patch-labels", "delete"

# CRD pattern of clustersPerDecisionGroup (applies to string values only; "25" passes it and is then
# Misconfigured at schedule time, while "150%" never reaches the scheduler)
_CLUSTERS_PER_GROUP_PATTERN = re.compile(r"^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$")
# CRD pattern of DecisionGroup.groupName
_GROUP_NAME = re.compile(r"^[a-zA-Z0-9][-A-Za-z0-9_.]{0,61}[a-zA-Z0-9]$")


class GroupStrategyError(ValueError):
    """A group strategy the scheduler reports as Misconfigured; str() is the message.

    `groups` are the groups built before the error, which upstream still turns into decisions: none
    for a bad `clustersPerDecisionGroup`, the earlier configured groups for a bad group selector.
    """

    def __init__(self, message: str, groups: Sequence[DecisionGroup] = ()) -> None:
        super().__init__(message)
        self.groups = list(groups)


@dataclass(frozen=True, slots=True)
class DecisionGroupSpec:
    """One `spec.decisionStrategy.groupStrategy.decisionGroups[]` entry (CEL is not supported here)."""

    group_name: str
    label_selector: LabelSelector
    claim_requirements: tuple[Requirement, ...] = ()
    # a label or claim selector apimachinery cannot convert: the reconcile reports it as Misconfigured
    selector_problem: SelectorProblem | None = None

    def matches(self, labels: Mapping[str, str], claims: Mapping[str, str]) -> bool:
        """Label selector AND claim selector; empty parts match everything."""
        return self.label_selector.matches(labels) and all(r.matches(claims) for r in self.claim_requirements)


@dataclass(frozen=True, slots=True)
class DecisionStrategy:
    """`spec.decisionStrategy.groupStrategy`, with the CRD default of one group of 100%."""

    clusters_per_decision_group: int | str = DEFAULT_CLUSTERS_PER_DECISION_GROUP
    decision_groups: tuple[DecisionGroupSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class SelectedCluster:
    """A selected ManagedCluster as the group selectors see it (claims: name -> value, last wins)."""

    name: str
    labels: Mapping[str, str]
    claims: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class DecisionGroup:
    """A decision group: its index in the final list, its name ("" for the rest) and name-sorted clusters."""

    index: int
    name: str
    cluster_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DecisionPage:
    """One PlacementDecision object's worth (at most 100) of a group's clusters."""

    name: str
    group_index: int
    group_name: str
    cluster_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExistingDecision:
    """A PlacementDecision already on the hub, in the placement's namespace."""

    name: str
    labels: Mapping[str, str]
    cluster_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BindAction:
    """One API call of the bind step; `manifest` is the desired object (None for a delete)."""

    verb: str
    name: str
    manifest: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class BindPlan:
    """The API calls of the bind step in upstream order, and the events recorded along the way."""

    actions: tuple[BindAction, ...]
    events: tuple[dict[str, str], ...]


# --- parsing -------------------------------------------------------------------------------------


def _parse_clusters_per_group(raw: Any, field_path: str) -> int | str:
    if raw is None:
        return DEFAULT_CLUSTERS_PER_DECISION_GROUP
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise ManifestError(
            field_path, f'Invalid value: "{type(raw).__name__}": must be an integer or a string'
        )
    if isinstance(raw, int):
        in_range(raw, field_path)
    if isinstance(raw, str) and not _CLUSTERS_PER_GROUP_PATTERN.match(raw):
        raise ManifestError(
            field_path, f"Invalid value: \"{raw}\": should match '{_CLUSTERS_PER_GROUP_PATTERN.pattern}'"
        )
    return raw


def _parse_group(raw: Any, field_path: str) -> DecisionGroupSpec:
    if not isinstance(raw, Mapping):
        raise ManifestError(field_path, "must be an object")
    name = raw.get("groupName")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{field_path}.groupName", "Required value")
    if not _GROUP_NAME.match(name):
        raise ManifestError(
            f"{field_path}.groupName", f"Invalid value: \"{name}\": should match '{_GROUP_NAME.pattern}'"
        )
    selector = raw.get("groupClusterSelector")
    if selector is None:
        raise ManifestError(f"{field_path}.groupClusterSelector", "Required value")
    if not isinstance(selector, Mapping):
        raise ManifestError(f"{field_path}.groupClusterSelector", "must be an object")
    claim_selector = selector.get("claimSelector") or {}
    if not isinstance(claim_selector, Mapping):
        raise ManifestError(f"{field_path}.groupClusterSelector.claimSelector", "must be an object")
    path = f"{field_path}.groupClusterSelector"
    try:
        label_selector, label_problem = parse_stored_label_selector(
            selector.get("labelSelector"), f"{path}.labelSelector"
        )
        claims, claim_problem = parse_stored_requirements(
            claim_selector.get("matchExpressions"), f"{path}.claimSelector"
        )
    except SelectorError as exc:
        raise ManifestError(exc.field, exc.message) from exc
    return DecisionGroupSpec(name, label_selector, claims, label_problem or claim_problem)


def parse_decision_strategy(
    raw: dict[str, Any] | None, field_path: str = "spec.decisionStrategy"
) -> DecisionStrategy:
    """Parse `spec.decisionStrategy`; raises ManifestError only for what the CRD rejects.

    A string `clustersPerDecisionGroup` the CRD pattern admits but that is not a percentage ("25") is
    accepted here: the scheduler reports it as Misconfigured (`calculate_group_length`).
    """
    if raw is None:
        return DecisionStrategy()
    if not isinstance(raw, Mapping):
        raise ManifestError(field_path, "must be an object")
    group_strategy = raw.get("groupStrategy") or {}
    path = f"{field_path}.groupStrategy"
    if not isinstance(group_strategy, Mapping):
        raise ManifestError(path, "must be an object")
    groups = group_strategy.get("decisionGroups") or []
    if not isinstance(groups, list):
        raise ManifestError(f"{path}.decisionGroups", "must be a list")
    return DecisionStrategy(
        clusters_per_decision_group=_parse_clusters_per_group(
            group_strategy.get("clustersPerDecisionGroup"), f"{path}.clustersPerDecisionGroup"
        ),
        decision_groups=tuple(_parse_group(g, f"{path}.decisionGroups[{i}]") for i, g in enumerate(groups)),
    )


# --- groups and pages ----------------------------------------------------------------------------


def calculate_group_length(clusters_per_decision_group: int | str, total: int) -> int:
    """How many clusters go in one decision group (upstream `calculateLength`).

    `total` is the number of selected clusters. Ints are used as they are, `"p%"` gives
    `ceil(p / 100 * total)`; a result <= 0 or > total becomes `total`.
    Raises GroupStrategyError for a string that is not a parsable percentage.
    """
    value = clusters_per_decision_group
    if isinstance(value, str):
        try:
            length = ceil_percent_of(value, total)
        except ValueError:
            raise GroupStrategyError(f"{value} invalid type: string is not a percentage") from None
        length = 0 if length is None else length
    else:
        length = value
    if length <= 0 or length > total:
        return total
    return length


def _chunks(names: Sequence[str], size: int) -> list[tuple[str, ...]]:
    if not names:
        return []
    return [tuple(names[start : start + size]) for start in range(0, len(names), size)]


def build_decision_groups(
    strategy: DecisionStrategy, selected: Sequence[SelectedCluster]
) -> list[DecisionGroup]:
    """Split the selected clusters (in score order) into decision groups (upstream `generateDecisionGroups`).

    Each configured group takes the still-unclaimed clusters its selector matches, sorted by name and
    cut into chunks of the group length; a group that matches nothing yields no group at all. The
    rest form groups named "". With nothing selected there is one empty group "".
    Raises GroupStrategyError when `clustersPerDecisionGroup` or a group's selector is invalid.
    """
    length = calculate_group_length(strategy.clusters_per_decision_group, len(selected))
    remaining = {cluster.name for cluster in selected}
    named_chunks: list[tuple[str, tuple[str, ...]]] = []
    for spec in strategy.decision_groups:
        if spec.selector_problem is not None:
            built = [DecisionGroup(index, name, names) for index, (name, names) in enumerate(named_chunks)]
            raise GroupStrategyError(spec.selector_problem.message, built)
        matched = []
        for cluster in selected:
            if cluster.name in remaining and spec.matches(cluster.labels, cluster.claims):
                matched.append(cluster.name)
                remaining.discard(cluster.name)
        named_chunks.extend((spec.group_name, chunk) for chunk in _chunks(sorted(matched), length))
    named_chunks.extend(("", chunk) for chunk in _chunks(sorted(remaining), length))
    if not named_chunks:
        named_chunks.append(("", ()))
    return [DecisionGroup(index, name, names) for index, (name, names) in enumerate(named_chunks)]


def build_decision_pages(placement_name: str, groups: Sequence[DecisionGroup]) -> list[DecisionPage]:
    """Cut each group into PlacementDecisions of at most 100 clusters (upstream `generateDecision`).

    Names are `<placement>-decision-<N>` with N counting from 1 across all groups; an empty group
    still gets one empty page.
    """
    pages: list[DecisionPage] = []
    for group in groups:
        for names in _chunks(group.cluster_names, MAX_CLUSTERS_PER_DECISION) or [()]:
            name = f"{placement_name}-decision-{len(pages) + 1}"
            pages.append(DecisionPage(name, group.index, group.name, names))
    return pages


def decision_labels(placement_name: str, page: DecisionPage) -> dict[str, str]:
    """The three labels every PlacementDecision of a placement carries."""
    return {
        PLACEMENT_LABEL: placement_name,
        DECISION_GROUP_NAME_LABEL: page.group_name,
        DECISION_GROUP_INDEX_LABEL: str(page.group_index),
    }


def decision_manifest(namespace: str, placement_name: str, page: DecisionPage) -> dict[str, Any]:
    """The desired PlacementDecision object (no owner reference: that needs the Placement's uid)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "PlacementDecision",
        "metadata": {
            "name": page.name,
            "namespace": namespace,
            "labels": decision_labels(placement_name, page),
        },
        "status": {"decisions": [{"clusterName": name, "reason": ""} for name in page.cluster_names]},
    }


def status_decision_groups(
    pages: Sequence[DecisionPage], groups: Sequence[DecisionGroup]
) -> list[dict[str, Any]]:
    """Placement `status.decisionGroups` (the JSON key is `clusterCount`)."""
    return [
        {
            "decisionGroupIndex": group.index,
            "decisionGroupName": group.name,
            "decisions": [page.name for page in pages if page.group_index == group.index],
            "clusterCount": len(group.cluster_names),
        }
        for group in groups
    ]


# --- bind ----------------------------------------------------------------------------------------


def _event(event_type: str, reason: str, action: str, message: str, related: str) -> dict[str, str]:
    return {"type": event_type, "reason": reason, "action": action, "message": message, "related": related}


def _note(decision_name: str, verb: str, placement_name: str, namespace: str) -> str:
    return f"Decision {decision_name} is {verb} with placement {placement_name} in namespace {namespace}"


def score_event_message(total_scores: Sequence[tuple[str, int]]) -> str:
    """`<name>:<total> ` per scored cluster (given in name order), cut with `......` past 1000 bytes."""
    items: list[str] = []
    size = 0  # upstream compares Go byte lengths
    for name, total in total_scores:
        item = f"{name}:{total} "
        item_size = len(item.encode())
        if size + item_size > MAX_EVENT_MESSAGE_LENGTH:
            return "".join(items) + "......"
        items.append(item)
        size += item_size
    return "".join(items)


def _status_patch_events(
    namespace: str,
    placement_name: str,
    decision_name: str,
    status: ScheduleStatus,
    total_scores: Sequence[tuple[str, int]],
) -> list[dict[str, str]]:
    updated = _note(decision_name, "updated", placement_name, namespace)
    if status.code == WARNING:
        events = [
            _event(
                "Warning",
                "DecisionUpdate",
                "DecisionUpdated",
                f"{updated}: {status.message} in plugin {status.plugin}",
                decision_name,
            )
        ]
    else:
        events = [_event("Normal", "DecisionUpdate", "DecisionUpdated", updated, decision_name)]
    if total_scores:
        events.append(
            _event("Normal", "ScoreUpdate", "ScoreUpdated", score_event_message(total_scores), decision_name)
        )
    return events


def plan_bind(
    namespace: str,
    placement_name: str,
    pages: Sequence[DecisionPage],
    existing: Sequence[ExistingDecision],
    status: ScheduleStatus,
    total_scores: Sequence[tuple[str, int]],
    *,
    real_api_server: bool = True,
) -> BindPlan:
    """The API calls and events of upstream `bind`, in the controller's order.

    `existing` are the PlacementDecisions in the placement's namespace; `total_scores` are
    `(cluster, total)` of every scored cluster in name order. Per page: create it when no
    object has its name (DecisionCreate); patch its status when the cluster list differs
    (DecisionUpdate, then ScoreUpdate when `total_scores` is non-empty; labels wait for the next
    reconcile); otherwise patch its labels when they differ (no event). Then every object labelled
    with the placement that is not a page is deleted (DecisionDelete), in name order.
    `real_api_server=False` mimics the fake client of upstream unit tests, whose create keeps the status.
    """
    by_name = {decision.name: decision for decision in existing}
    actions: list[BindAction] = []
    events: list[dict[str, str]] = []
    for page in pages:
        manifest = decision_manifest(namespace, placement_name, page)
        current = by_name.get(page.name)
        if current is None:
            actions.append(BindAction(CREATE, page.name, manifest))
            events.append(
                _event(
                    "Normal",
                    "DecisionCreate",
                    "DecisionCreated",
                    _note(page.name, "created", placement_name, namespace),
                    page.name,
                )
            )
            # upstream: a real API server drops status on create, so it is patched right after
            stored_clusters: tuple[str, ...] = () if real_api_server else page.cluster_names
            stored_labels: Mapping[str, str] = manifest["metadata"]["labels"]
        else:
            stored_clusters, stored_labels = tuple(current.cluster_names), current.labels
        # nil and empty decision lists compare equal (equality.Semantic.DeepEqual)
        if stored_clusters != page.cluster_names:
            actions.append(BindAction(PATCH_STATUS, page.name, manifest))
            events.extend(_status_patch_events(namespace, placement_name, page.name, status, total_scores))
        elif dict(stored_labels) != manifest["metadata"]["labels"]:
            actions.append(BindAction(PATCH_LABELS, page.name, manifest))
    wanted = {page.name for page in pages}
    for decision in sorted(existing, key=lambda d: d.name):
        if decision.labels.get(PLACEMENT_LABEL) != placement_name or decision.name in wanted:
            continue
        actions.append(BindAction(DELETE, decision.name, None))
        events.append(
            _event(
                "Normal",
                "DecisionDelete",
                "DecisionDeleted",
                _note(decision.name, "deleted", placement_name, namespace),
                decision.name,
            )
        )
    return BindPlan(tuple(actions), tuple(events))


def held_decisions(existing: Sequence[ExistingDecision], plan: BindPlan | None) -> list[ExistingDecision]:
    """The placement's PlacementDecisions once the API calls of `plan` are done, sorted by name.

    A real API server drops the status of a created object, so a created page holds no cluster until
    its status patch; a status patch leaves the labels as they were (upstream returns before patching
    labels, which wait for the next reconcile). Without a plan nothing was written.
    """
    held = {decision.name: decision for decision in existing}
    for action in () if plan is None else plan.actions:
        manifest = action.manifest
        # only a delete carries no object
        if action.verb == DELETE or manifest is None:
            del held[action.name]
            continue
        labels = manifest["metadata"]["labels"]
        if action.verb == CREATE:
            held[action.name] = ExistingDecision(action.name, labels, ())
            continue
        current = held[action.name]
        if action.verb == PATCH_STATUS:
            clusters = tuple(entry["clusterName"] for entry in manifest["status"]["decisions"])
            held[action.name] = ExistingDecision(action.name, current.labels, clusters)
        else:
            held[action.name] = ExistingDecision(action.name, labels, current.cluster_names)
    return [held[name] for name in sorted(held)]
