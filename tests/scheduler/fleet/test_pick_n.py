"""PickN cycle: tie-break, existing bindings, cross-reference, downscale, decisions and condition."""

from __future__ import annotations

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import build_decisions, schedule_crp
from placement.scheduler.fleet.types import (
    ClusterAffinity,
    ClusterSelectorTerm,
    PlacementPolicy,
    PreferredClusterSelector,
)
from placement.scheduler.labels import parse_label_selector
from placement.scheduler.record import ClusterRecord
from tests.scheduler.fleet.builders import NOW, binding, member, placement


def _pick(count: int, **policy: object) -> PlacementPolicy:
    return PlacementPolicy("PickN", number_of_clusters=count, **policy)  # type: ignore[arg-type]


def test_equal_scores_pick_the_larger_name_first() -> None:
    inventory = FleetInventory(member(n) for n in ("cluster-a", "cluster-b", "cluster-c"))
    result = schedule_crp(placement(_pick(1)), inventory, [], NOW)
    assert result.selected == ("cluster-c",)
    not_picked = [d.cluster_name for d in result.decisions if not d.selected]
    assert not_picked == ["cluster-b", "cluster-a"]
    assert result.decisions[1].reason == (
        'Cluster "cluster-b" does not score high enough (affinity score: 0, topology spread score: 0)'
    )


def test_condition_messages() -> None:
    inventory = FleetInventory([member("a"), member("b")])
    short = schedule_crp(placement(_pick(3)), inventory, [], NOW).condition
    assert (short.status, short.reason) == (False, "SchedulingPolicyUnfulfilled")
    assert short.message == (
        "could not find all clusters needed as specified by the scheduling policy, found 2 cluster(s) instead"
    )
    full = schedule_crp(placement(_pick(2)), inventory, [], NOW).condition
    assert (
        full.message == "found all cluster needed as specified by the scheduling policy, found 2 cluster(s)"
    )


def test_existing_picks_are_never_rescored_under_the_same_policy() -> None:
    # "old" lost its label, yet its binding stays: IgnoredDuringExecution
    inventory = FleetInventory([member("old", {"env": "dev"}), member("new", {"env": "prod"})])
    term = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"env": "prod"}}))
    policy = _pick(2, affinity=ClusterAffinity((term,)))
    result = schedule_crp(placement(policy), inventory, [binding("old", score=(7, 0))], NOW)
    assert result.selected == ("new", "old")
    assert [c.binding.target_cluster for c in result.binding_changes] == ["new"]
    old = result.explain("old")
    assert old is not None and old.selected and old.affinity_score == 7
    # the filter would reject it now; the decision list still shows it once, as selected
    assert [d.selected for d in result.decisions if d.cluster_name == "old"] == [True]


def test_already_selected_clusters_are_dropped_silently() -> None:
    inventory = FleetInventory([member("a"), member("b")])
    result = schedule_crp(placement(_pick(2)), inventory, [binding("a")], NOW)
    assert result.selected == ("b", "a")
    explanation = result.explain("a")
    assert explanation is not None and explanation.filtered_by == "already selected under this policy"
    assert all("already selected" not in d.reason for d in result.decisions)


def test_repicked_obsolete_binding_keeps_its_state_and_others_are_unscheduled_last() -> None:
    inventory = FleetInventory([member("a", {"tier": "gold"}), member("b")])
    gold = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"tier": "gold"}}))
    policy = _pick(1, affinity=ClusterAffinity(preferred=(PreferredClusterSelector(10, gold),)))
    old = [binding("a", "Bound", snapshot="web-0"), binding("b", "Bound", snapshot="web-0")]
    result = schedule_crp(placement(policy), inventory, old, NOW, policy_snapshot_name="web-1")
    changes = {c.binding.target_cluster: c for c in result.binding_changes}
    assert changes["a"].action == "patch"
    assert changes["a"].binding.state == "Bound"
    assert changes["a"].binding.scheduling_policy_snapshot_name == "web-1"
    assert changes["b"].action == "unschedule"
    assert changes["b"].binding.previous_state == "Bound"
    assert [c.action for c in result.binding_changes] == ["patch", "unschedule"]


def test_obsolete_flag_breaks_ties_towards_the_previous_pick() -> None:
    inventory = FleetInventory([member("a"), member("z")])
    result = schedule_crp(
        placement(_pick(1)), inventory, [binding("a", snapshot="web-0")], NOW, policy_snapshot_name="web-1"
    )
    assert result.selected == ("a",)


def test_repicking_an_unscheduled_binding_restores_its_previous_state() -> None:
    inventory = FleetInventory([member("a")])
    gone = binding("a", "Unscheduled", previous_state="Bound")
    result = schedule_crp(placement(_pick(1)), inventory, [gone], NOW)
    (change,) = result.binding_changes
    assert (change.action, change.binding.state, change.binding.previous_state) == ("patch", "Bound", None)


def test_downscale_trims_scheduled_first_then_lowest_scored_bound() -> None:
    inventory = FleetInventory(member(n) for n in "abcde")
    existing = [
        binding("a", "Bound", score=(5, 0)),
        binding("b", "Bound", score=(1, 0)),
        binding("c", "Bound", score=(1, 0)),
        binding("d", "Scheduled", score=(90, 0)),
        binding("e", "Bound", score=None),
    ]
    result = schedule_crp(placement(_pick(2)), inventory, existing, NOW)
    trimmed = [c.binding.target_cluster for c in result.binding_changes]
    # scheduled d first; then bound: no stored score first, then score ascending, then name
    assert trimmed == ["d", "e", "b"]
    assert set(result.selected) == {"a", "c"}
    assert result.condition.status


def test_lingering_obsolete_bindings_trigger_downscale_at_the_right_count() -> None:
    inventory = FleetInventory([member("a"), member("b")])
    existing = [binding("a", snapshot="web-1"), binding("b", snapshot="web-0")]
    result = schedule_crp(placement(_pick(1)), inventory, existing, NOW, policy_snapshot_name="web-1")
    assert [(c.action, c.binding.target_cluster) for c in result.binding_changes] == [("unschedule", "b")]


def test_dangling_binding_is_marked_unscheduled() -> None:
    inventory = FleetInventory([member("a")])
    result = schedule_crp(placement(_pick(1)), inventory, [binding("left-the-fleet")], NOW)
    actions = {c.binding.target_cluster: c.action for c in result.binding_changes}
    assert actions == {"left-the-fleet": "unschedule", "a": "create"}


def test_decisions_cap_unselected_entries_at_twenty() -> None:
    inventory = FleetInventory([member(f"m{i:02d}") for i in range(30)] + [member("x", {"env": "dev"})])
    term = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"env": "dev"}}))
    policy = _pick(1, affinity=ClusterAffinity((term,)))
    result = schedule_crp(placement(policy), inventory, [], NOW)
    assert result.selected == ("x",)
    assert len([d for d in result.decisions if not d.selected]) == 20
    assert result.decisions[1].reason.startswith("ClusterUnschedulable, cluster does not match")


def test_build_decisions_skipped_filtered_entries_use_up_slots() -> None:
    existing = [[binding("a")]]
    filtered = [("a", "ClusterUnschedulable, x"), ("b", "ClusterUnschedulable, y")]
    decisions = build_decisions(existing, [], filtered, max_unselected=1)
    assert [d.cluster_name for d in decisions] == ["a"]


def test_the_stored_record_agrees_with_the_report_row_by_row() -> None:
    gold = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"tier": "gold"}}))
    alive = ClusterSelectorTerm(
        parse_label_selector({"matchExpressions": [{"key": "tier", "operator": "Exists"}]})
    )
    affinity = ClusterAffinity(required_terms=(alive,), preferred=(PreferredClusterSelector(10, gold),))
    inventory = FleetInventory(
        [
            member("a", {"tier": "gold"}),
            member("b", {"tier": "silver"}),
            member("c"),
            member("d", {"tier": "gold"}),
        ]
    )
    result = schedule_crp(placement(_pick(2, affinity=affinity)), inventory, [], NOW)
    report, (stored, record) = result.to_report(), result.to_explanation()
    rows = report.pop("clusters")
    assert stored == report
    assert [record.row(i) for i in range(len(record))] == rows
    assert ClusterRecord.unpack(record.pack()).rows() == rows  # as stored
    assert rows == [c.to_dict() for c in result.clusters()]
    assert {r["name"]: (r["selected"], r["affinityScore"], r["filteredBy"] is not None) for r in rows} == {
        "a": (True, 10, False),
        "b": (False, 0, False),
        "c": (False, None, True),
        "d": (True, 10, False),
    }
