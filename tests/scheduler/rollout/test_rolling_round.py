"""One rolling-update round: candidates, budgets, order, stale bindings and requeue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from placement.scheduler.fleet.types import (
    STATE_BOUND,
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    BindingCondition,
    OverrideSnapshots,
    PlacementPolicy,
    RollingUpdateConfig,
)
from placement.scheduler.rollout.rolling import (
    APPLIED,
    AVAILABLE,
    CANDIDATE_APPLY_FAILED,
    CANDIDATE_BIND,
    CANDIDATE_REMOVE,
    CANDIDATE_UPDATE,
    FALSE,
    TRUE,
    plan_rolling_update_round,
)
from tests.scheduler.fleet import builders

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
LATEST = "web-app-2-snapshot"
OLD = "web-app-1-snapshot"
READY = (
    BindingCondition(APPLIED, TRUE, "AllWorkHaveBeenApplied", 1, NOW),
    BindingCondition(AVAILABLE, TRUE, "AllWorkAreAvailable", 1, NOW),
)
APPLY_FAILED = (BindingCondition(APPLIED, FALSE, "", 1, NOW),)


def binding(cluster: str, state: str, snapshot: str = OLD, conditions=READY, **extra):
    """A binding of `web` at generation 1 whose conditions were observed at that generation."""
    return builders.binding(
        cluster, state, resource_snapshot_name=snapshot, generation=1, conditions=conditions, **extra
    )


def names(updates) -> list[str]:
    return [u.binding.target_cluster for u in updates]


def test_scheduled_binding_is_bound_to_the_latest_snapshot_with_its_overrides() -> None:
    overrides = {"eu-1": OverrideSnapshots(("web-app-cro-0",), ("team-a/web-app-ro-0",))}

    plan = plan_rolling_update_round(
        PlacementPolicy("PickAll"),
        RollingUpdateConfig(),
        [binding("eu-1", STATE_SCHEDULED, "")],
        LATEST,
        NOW,
        overrides,
    )

    (update,) = plan.to_be_updated
    assert update.candidate == CANDIDATE_BIND and update.action == "Bind"
    assert update.desired is not None
    assert (update.desired.state, update.desired.resource_snapshot_name) == (STATE_BOUND, LATEST)
    assert update.desired.overrides == overrides["eu-1"]


def test_percentages_are_rounded_up_against_n() -> None:
    bindings = [binding(f"m{i}", STATE_BOUND) for i in range(7)]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=7),
        RollingUpdateConfig("10%", "10%", 60),
        bindings,
        LATEST,
        NOW,
    )

    assert plan.budgets is not None
    assert (plan.budgets.max_unavailable, plan.budgets.max_surge) == (1, 1)
    assert names(plan.to_be_updated) == ["m0"]
    assert names(plan.stale) == [f"m{i}" for i in range(1, 7)]


def test_apply_failed_bindings_are_updated_outside_the_unavailability_budget() -> None:
    bindings = [
        binding("m0", STATE_BOUND, conditions=APPLY_FAILED),
        binding("m1", STATE_BOUND),
        binding("m2", STATE_BOUND),
    ]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=3), RollingUpdateConfig(0, 0, 60), bindings, LATEST, NOW
    )

    assert [(u.binding.target_cluster, u.candidate) for u in plan.to_be_updated] == [
        ("m0", CANDIDATE_APPLY_FAILED)
    ]
    assert names(plan.stale) == ["m1", "m2"]


def test_removals_come_before_in_place_updates_and_are_never_stale() -> None:
    bindings = [
        binding("m0", STATE_BOUND),
        binding("m1", STATE_BOUND),
        binding("gone-1", STATE_UNSCHEDULED),
        binding("gone-2", STATE_UNSCHEDULED),
    ]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=2), RollingUpdateConfig(1, 0, 60), bindings, LATEST, NOW
    )

    assert plan.budgets is not None and plan.budgets.max_to_remove == 3
    assert [(u.binding.target_cluster, u.candidate) for u in plan.to_be_updated] == [
        ("gone-1", CANDIDATE_REMOVE),
        ("gone-2", CANDIDATE_REMOVE),
        ("m0", CANDIDATE_UPDATE),
    ]
    assert plan.to_be_updated[0].action == "Delete"
    assert names(plan.stale) == ["m1"]


def test_zero_surge_and_zero_unavailable_can_still_add_up_to_n_but_never_update_in_place() -> None:
    bindings = [
        binding("m0", STATE_BOUND),
        binding("m1", STATE_SCHEDULED, ""),
        binding("m2", STATE_SCHEDULED, ""),
    ]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=3), RollingUpdateConfig(0, 0, 60), bindings, LATEST, NOW
    )

    assert names(plan.to_be_updated) == ["m1", "m2"]
    assert names(plan.stale) == ["m0"]


def test_up_to_date_bound_bindings_only_get_a_status_refresh() -> None:
    plan = plan_rolling_update_round(
        PlacementPolicy("PickAll"), RollingUpdateConfig(), [binding("m0", STATE_BOUND, LATEST)], LATEST, NOW
    )

    assert not plan.need_roll
    assert [b.target_cluster for b in plan.up_to_date] == ["m0"]
    assert plan.requeue_after == timedelta(0)


def test_changed_overrides_make_an_otherwise_current_binding_an_update_candidate() -> None:
    overrides = {"m0": OverrideSnapshots(("web-app-cro-1",))}

    plan = plan_rolling_update_round(
        PlacementPolicy("PickAll"),
        RollingUpdateConfig(),
        [binding("m0", STATE_BOUND, LATEST)],
        LATEST,
        NOW,
        overrides,
    )

    assert plan.need_roll
    assert [u.candidate for u in plan.to_be_updated] == [CANDIDATE_UPDATE]


def test_pick_all_target_counts_deleting_bound_bindings() -> None:
    bindings = [binding("m0", STATE_BOUND, LATEST), binding("m1", STATE_BOUND, LATEST, deleting=True)]

    plan = plan_rolling_update_round(PlacementPolicy("PickAll"), RollingUpdateConfig(), bindings, LATEST, NOW)

    assert plan.budgets is not None and plan.budgets.target_number == 2


def test_pick_fixed_target_is_the_number_of_cluster_names() -> None:
    plan = plan_rolling_update_round(
        PlacementPolicy("PickFixed", cluster_names=("m0", "m1", "m2")), RollingUpdateConfig(), [], LATEST, NOW
    )

    assert plan.budgets is not None and plan.budgets.target_number == 3


def test_requeue_uses_the_smallest_known_wait() -> None:
    tracking = BindingCondition(AVAILABLE, TRUE, "WorkNotTrackable", 1, NOW - timedelta(seconds=50))
    bindings = [
        binding("m0", STATE_BOUND, conditions=(tracking,)),
        binding("m1", STATE_BOUND, conditions=(BindingCondition(APPLIED, TRUE, "", 1, NOW),)),
    ]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=2), RollingUpdateConfig(), bindings, LATEST, NOW
    )

    assert plan.requeue_after == timedelta(seconds=10)


def test_requeue_falls_back_to_the_unavailable_period_without_a_known_wait() -> None:
    bindings = [binding("m0", STATE_BOUND, conditions=())]

    plan = plan_rolling_update_round(
        PlacementPolicy("PickN", number_of_clusters=1), RollingUpdateConfig(0, 1, 7), bindings, LATEST, NOW
    )

    assert plan.requeue_after == timedelta(seconds=7)
