"""Vector adapters for OCM decision groups, PlacementDecision pages, the bind plan and Placement conditions.

Plugins: `generatePlacementDecisionsAndStatus`, `bind`, `calculateLength`, `newSatisfiedCondition`,
`newMisconfiguredCondition`. Each builds inputs from the vector and calls the product's functions in
`placement.scheduler.ocm.{decisions,status}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from placement.scheduler.ocm.decisions import (
    DECISION_GROUP_INDEX_LABEL,
    DECISION_GROUP_NAME_LABEL,
    PLACEMENT_LABEL,
    BindAction,
    DecisionGroup,
    DecisionPage,
    ExistingDecision,
    GroupStrategyError,
    SelectedCluster,
    build_decision_groups,
    build_decision_pages,
    calculate_group_length,
    decision_manifest,
    parse_decision_strategy,
    plan_bind,
    status_decision_groups,
)
from placement.scheduler.ocm.status import (
    MISCONFIGURED,
    SUCCESS,
    ScheduleStatus,
    misconfigured_condition,
    satisfied_condition,
)
from tests.vector_adapters.common import check

_GENERATED = re.compile(r"^(?P<prefix>\D*)(?P<first>\d+)\.\.(?P=prefix)(?P<last>\d+)$")
_ACTION = re.compile(
    r"^(?P<verb>create|delete|patch status of|patch labels of)\s+(?P<name>\S+)"
    r"(?:\s+\((?P<count>\d+) clusters?\))?$"
)
_VERBS = {
    "create": "create",
    "delete": "delete",
    "patch status of": "patch-status",
    "patch labels of": "patch-labels",
}


# --- inputs --------------------------------------------------------------------------------------


def _generated_names(spec: str) -> list[str]:
    """`"cluster1..cluster10"` -> cluster1 … cluster10, in numeric (upstream creation) order."""
    match = _GENERATED.match(spec)
    assert match, f"cannot read generated cluster names {spec!r}"
    prefix = match["prefix"]
    return [f"{prefix}{i}" for i in range(int(match["first"]), int(match["last"]) + 1)]


def _claims(raw: Any) -> dict[str, str]:
    if isinstance(raw, dict):
        return dict(raw)
    return {claim["name"]: claim["value"] for claim in raw or []}


def _selected_clusters(vector: dict[str, Any]) -> list[SelectedCluster]:
    if "selected_clusters_generated" in vector:
        return [
            SelectedCluster(name, {}, {}) for name in _generated_names(vector["selected_clusters_generated"])
        ]
    return [
        SelectedCluster(
            c["name"], dict(c.get("labels") or {}), _claims(c.get("claims") or c.get("clusterClaims"))
        )
        for c in vector.get("selected_clusters", [])
    ]


def _status(raw: Any) -> ScheduleStatus:
    if raw is None:
        return ScheduleStatus()
    if isinstance(raw, str):
        return ScheduleStatus(code=raw)
    return ScheduleStatus(
        code=raw.get("code", SUCCESS), plugin=raw.get("plugin", ""), message=raw.get("message", "")
    )


def _existing_decisions(vector: dict[str, Any]) -> list[ExistingDecision]:
    """Existing PlacementDecisions; `decisions_count` entries take consecutive slices of the name-sorted
    pool cluster1..clusterN (N = their sum), as upstream tests build them from `newSelectedClusters(N)`."""
    placement_name = vector["placement"]["name"]
    raw = vector.get("existing_decisions", [])
    pool_size = sum(d.get("decisions_count", 0) for d in raw)
    pool = sorted(_generated_names(f"cluster1..cluster{pool_size}")) if pool_size else []
    existing = []
    for decision in raw:
        if "decisions" in decision:
            names = tuple(decision["decisions"])
        else:
            names, pool = tuple(pool[: decision["decisions_count"]]), pool[decision["decisions_count"] :]
        # upstream test fixtures carry the placement's labels with group "" / index "0" unless told otherwise
        labels = decision.get("labels") or {
            PLACEMENT_LABEL: placement_name,
            DECISION_GROUP_NAME_LABEL: "",
            DECISION_GROUP_INDEX_LABEL: "0",
        }
        existing.append(ExistingDecision(decision["name"], labels, names))
    return existing


def _groups_and_pages(
    vector: dict[str, Any], selected: list[SelectedCluster]
) -> tuple[list[DecisionGroup], list[DecisionPage], ScheduleStatus]:
    """Upstream `generatePlacementDecisionsAndStatus`: a group strategy error yields no decisions at all."""
    placement = vector["placement"]
    strategy = parse_decision_strategy(placement.get("decisionStrategy"))
    try:
        groups = build_decision_groups(strategy, selected)
    except GroupStrategyError as exc:
        return [], [], ScheduleStatus(MISCONFIGURED, "", str(exc))
    return groups, build_decision_pages(placement["name"], groups), ScheduleStatus()


# --- plugins -------------------------------------------------------------------------------------


def run_calculate_length(vector: dict[str, Any]) -> None:
    """`calculateLength(clustersPerDecisionGroup, totalSelected)`: a length, or a Misconfigured message."""
    given = vector["input"]
    expected = vector.get("expected", vector.get("expected_status"))
    try:
        actual: Any = calculate_group_length(given["clustersPerDecisionGroup"], given["totalSelected"])
    except GroupStrategyError as exc:
        actual = {"code": MISCONFIGURED, "message": str(exc)}
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{vector['id']}: expected an error, got length {actual}"
        for key, value in expected.items():
            check(vector, f"expected.{key}", actual.get(key), value)
        return
    check(vector, "expected", actual, expected)


def run_new_satisfied_condition(vector: dict[str, Any]) -> None:
    """`newSatisfiedCondition(...)`: every key of the expected condition."""
    given = vector["input"]
    condition = satisfied_condition(
        cluster_sets_in_spec=given.get("clusterSetsInSpec") or [],
        eligible_cluster_sets=given.get("eligibleClusterSets") or [],
        num_bindings=given.get("numOfBindings", 0),
        num_available_clusters=given.get("numOfAvailableClusters", 0),
        num_feasible_clusters=given.get("numOfFeasibleClusters", 0),
        num_unscheduled=given.get("numOfUnscheduledDecisions", 0),
        status=_status(given.get("status")),
    )
    for key, value in vector["expected"].items():
        check(vector, f"expected.{key}", condition.get(key), value)


def run_new_misconfigured_condition(vector: dict[str, Any]) -> None:
    """`newMisconfiguredCondition(status)`: every key of the expected condition."""
    condition = misconfigured_condition(_status(vector["input"].get("status")))
    for key, value in vector["expected"].items():
        check(vector, f"expected.{key}", condition.get(key), value)


def _check_decision(
    vector: dict[str, Any], field: str, manifest: dict[str, Any], expected: dict[str, Any]
) -> None:
    check(vector, f"{field}.name", manifest["metadata"]["name"], expected["name"])
    labels = manifest["metadata"]["labels"]
    if "labels" in expected:
        check(vector, f"{field}.labels", labels, expected["labels"])
    if "group" in expected:
        check(vector, f"{field}.group", labels[DECISION_GROUP_NAME_LABEL], expected["group"])
    if "index" in expected:
        check(vector, f"{field}.index", labels[DECISION_GROUP_INDEX_LABEL], str(expected["index"]))
    names = [d["clusterName"] for d in manifest["status"]["decisions"]]
    if "decisions" in expected:
        check(vector, f"{field}.decisions", names, expected["decisions"])
    if "decisions_count" in expected:
        check(vector, f"{field}.decisions_count", len(names), expected["decisions_count"])
    if "decisions_first" in expected:
        first = expected["decisions_first"]
        check(vector, f"{field}.decisions_first", names[: len(first)], first)
    if "decisions_last" in expected:
        last = expected["decisions_last"]
        check(vector, f"{field}.decisions_last", names[len(names) - len(last) :], last)


def run_generate_placement_decisions(vector: dict[str, Any]) -> None:
    """`generatePlacementDecisionsAndStatus`: PlacementDecision objects, status decisionGroups, status."""
    placement = vector["placement"]
    selected = _selected_clusters(vector)
    groups, pages, status = _groups_and_pages(vector, selected)
    manifests = [decision_manifest(placement["namespace"], placement["name"], page) for page in pages]
    if "expected_placement_decisions" in vector:
        expected_decisions = vector["expected_placement_decisions"]
        check(vector, "expected_placement_decisions.length", len(manifests), len(expected_decisions))
        for index, (manifest, expected) in enumerate(zip(manifests, expected_decisions, strict=True)):
            _check_decision(vector, f"expected_placement_decisions[{index}]", manifest, expected)
    if "expected_status_decision_groups" in vector:
        check(
            vector,
            "expected_status_decision_groups",
            status_decision_groups(pages, groups),
            vector["expected_status_decision_groups"],
        )
    if "expected_numberOfSelectedClusters" in vector:
        # upstream writes len(scheduleResult.Decisions()), even when grouping failed
        check(
            vector,
            "expected_numberOfSelectedClusters",
            len(selected),
            vector["expected_numberOfSelectedClusters"],
        )
    if "expected_status" in vector:
        for key, value in vector["expected_status"].items():
            check(vector, f"expected_status.{key}", getattr(status, key), value)


def _describe(action: BindAction) -> tuple[str, str, int | None]:
    count = None if action.manifest is None else len(action.manifest["status"]["decisions"])
    return action.verb, action.name, count


def run_bind(vector: dict[str, Any]) -> None:
    """`bind`: the API calls in order (`expected_actions`, e.g. "delete placement1-decision-2"), and events.

    Upstream unit tests run against the fake client, whose create keeps the status, so
    `real_api_server` defaults to False.
    """
    placement = vector["placement"]
    _, pages, status = _groups_and_pages(vector, _selected_clusters(vector))
    plan = plan_bind(
        placement["namespace"],
        placement["name"],
        pages,
        _existing_decisions(vector),
        _status(vector.get("status")) if "status" in vector else status,
        sorted((vector.get("total_scores") or {}).items()),
        real_api_server=vector.get("real_api_server", False),
    )
    actual = [_describe(action) for action in plan.actions]
    expected_actions = vector.get("expected_actions", [])
    check(vector, "expected_actions.length", len(actual), len(expected_actions))
    for index, (got, text) in enumerate(zip(actual, expected_actions, strict=True)):
        match = _ACTION.match(text)
        assert match, f"{vector['id']}: cannot read expected action {text!r}"
        check(vector, f"expected_actions[{index}]", got[:2], (_VERBS[match["verb"]], match["name"]))
        if match["count"] is not None:
            check(vector, f"expected_actions[{index}].clusters", got[2], int(match["count"]))
    for index, expected in enumerate(vector.get("expected_events", [])):
        assert index < len(plan.events), f"{vector['id']}: missing event {expected!r}"
        for key, value in expected.items():
            check(vector, f"expected_events[{index}].{key}", plan.events[index].get(key), value)
    if "expected_events" in vector:
        check(vector, "expected_events.length", len(plan.events), len(vector["expected_events"]))


ADAPTERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "generatePlacementDecisionsAndStatus": run_generate_placement_decisions,
    "bind": run_bind,
    "calculateLength": run_calculate_length,
    "newSatisfiedCondition": run_new_satisfied_condition,
    "newMisconfiguredCondition": run_new_misconfigured_condition,
}
