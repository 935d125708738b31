"""Staged update run initialisation: binding classification, stages, ordering and failure texts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from placement.scheduler.fleet.types import (
    PICK_FIXED,
    PICK_N,
    STATE_BOUND,
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    PlacementPolicy,
)
from placement.scheduler.labels import LabelSelector
from placement.scheduler.rollout.staged import (
    APPROVAL,
    DELETE_STAGE_NAME,
    INITIALIZED_FAILED_REASON,
    INITIALIZED_SUCCEEDED_REASON,
    TIMED_WAIT,
    InitializationError,
    MemberClusterLabels,
    StageConfig,
    StagedUpdateStrategy,
    StageTask,
    StageTaskPlan,
    TransientBindingStateError,
    UpdateRunBinding,
    initialize_update_run,
)

EVERYTHING = LabelSelector()


def ring(name: str) -> LabelSelector:
    return LabelSelector(match_labels=(("ring", name),))


CLUSTERS = [
    MemberClusterLabels("aks-eu-2", {"ring": "prod", "order": "2"}),
    MemberClusterLabels("aks-eu-1", {"ring": "prod", "order": "10"}),
    MemberClusterLabels("aks-us-1", {"ring": "prod", "order": "2"}),
    MemberClusterLabels("aks-canary", {"ring": "canary", "order": "1"}),
]


def selected(*names: str) -> list[UpdateRunBinding]:
    return [UpdateRunBinding(name, STATE_BOUND) for name in names]


PICK_ALL_POLICY = PlacementPolicy()


def initialize(stages, bindings=None, policy=PICK_ALL_POLICY, clusters=CLUSTERS):
    bindings = selected(*(c.name for c in clusters)) if bindings is None else bindings
    return initialize_update_run(
        "release-42", policy, clusters, bindings, StagedUpdateStrategy("rings", stages)
    )


def failure(stages, **kwargs) -> InitializationError:
    with pytest.raises(InitializationError) as caught:
        initialize(stages, **kwargs)
    return caught.value


def test_stages_follow_the_strategy_with_approval_request_names() -> None:
    plan = initialize(
        (
            StageConfig(
                "canary", ring("canary"), after_stage_tasks=(StageTask(TIMED_WAIT, timedelta(hours=1)),)
            ),
            StageConfig(
                "prod",
                ring("prod"),
                before_stage_tasks=(StageTask(APPROVAL),),
                after_stage_tasks=(StageTask(APPROVAL),),
            ),
        )
    )

    assert [(s.name, s.clusters) for s in plan.stages] == [
        ("canary", ("aks-canary",)),
        ("prod", ("aks-eu-1", "aks-eu-2", "aks-us-1")),
    ]
    assert plan.stages[0].after_stage_tasks == (StageTaskPlan(TIMED_WAIT, timedelta(hours=1)),)
    assert plan.stages[1].before_stage_approval_request_name == "release-42-before-prod"
    assert plan.stages[1].after_stage_approval_request_name == "release-42-after-prod"
    assert plan.initialized.status == "True" and plan.initialized.reason == INITIALIZED_SUCCEEDED_REASON


def test_sorting_label_is_compared_as_an_integer_then_by_name() -> None:
    plan = initialize((StageConfig("all", EVERYTHING, sorting_label_key="order"),))

    assert plan.stages[0].clusters == ("aks-canary", "aks-eu-2", "aks-us-1", "aks-eu-1")


def test_signed_sorting_labels_parse_like_go_atoi() -> None:
    clusters = [MemberClusterLabels("a", {"order": "+3"}), MemberClusterLabels("b", {"order": "-1"})]

    plan = initialize((StageConfig("all", EVERYTHING, sorting_label_key="order"),), clusters=clusters)

    assert plan.stages[0].clusters == ("b", "a")


def test_missing_sorting_label_fails_instead_of_falling_back_to_name_order() -> None:
    clusters = [*CLUSTERS, MemberClusterLabels("aks-new", {"ring": "prod"})]

    error = failure((StageConfig("all", EVERYTHING, sorting_label_key="order"),), clusters=clusters)

    assert error.message.endswith(
        "the sorting label `order:` on cluster `aks-new` is not valid: "
        'strconv.Atoi: parsing "": invalid syntax'
    )
    assert error.condition.reason == INITIALIZED_FAILED_REASON and error.condition.status == "False"


def test_non_integer_sorting_label_fails() -> None:
    clusters = [MemberClusterLabels("aks-eu-1", {"order": "first"})]

    error = failure((StageConfig("all", EVERYTHING, sorting_label_key="order"),), clusters=clusters)

    assert "the sorting label `order:first` on cluster `aks-eu-1` is not valid" in error.message


def test_nil_selector_selects_nothing_and_an_empty_stage_is_allowed() -> None:
    plan = initialize((StageConfig("all", EVERYTHING), StageConfig("none", None)))

    assert plan.stages[1].clusters == ()


def test_a_cluster_matching_two_stages_fails() -> None:
    error = failure((StageConfig("canary", ring("canary")), StageConfig("all", EVERYTHING)))

    assert error.message == (
        "cannot continue the updateRun: failed to initialize the updateRun: "
        "failed to process the request due to a client error: "
        "cluster `aks-canary` appears in more than one stages"
    )


def test_unplaced_clusters_are_listed_sorted_up_to_ten() -> None:
    clusters = [MemberClusterLabels(f"member-{i:02d}", {}) for i in range(12)]

    error = failure((StageConfig("nobody", None),), clusters=clusters)

    shown = ", ".join(f"member-{i:02d}" for i in range(10))
    assert error.message.endswith(
        f"some clusters are not placed in any stage, total 12, showing up to 10: {shown}"
    )


def test_selected_cluster_without_a_member_cluster_is_unplaced() -> None:
    error = failure((StageConfig("all", EVERYTHING),), bindings=selected("aks-eu-1", "aks-deleted"))

    assert error.message.endswith("total 1, showing up to 10: aks-deleted")


def test_only_selected_clusters_enter_stages_and_unscheduled_go_to_the_delete_stage() -> None:
    bindings = [
        UpdateRunBinding("aks-eu-1", STATE_SCHEDULED),
        UpdateRunBinding("aks-us-1", STATE_UNSCHEDULED),
        UpdateRunBinding("aks-canary", STATE_UNSCHEDULED, latest_policy=False),
    ]

    plan = initialize((StageConfig("all", EVERYTHING),), bindings=bindings)

    assert plan.stages[0].clusters == ("aks-eu-1",)
    assert (plan.deletion_stage.name, plan.deletion_stage.clusters) == (
        DELETE_STAGE_NAME,
        ("aks-canary", "aks-us-1"),
    )


def test_binding_of_an_older_policy_not_yet_unscheduled_is_transient() -> None:
    bindings = [UpdateRunBinding("aks-eu-1", STATE_BOUND, latest_policy=False)]

    with pytest.raises(TransientBindingStateError):
        initialize((StageConfig("all", EVERYTHING),), bindings=bindings)


def test_no_bindings_at_all_fails() -> None:
    assert (
        "no scheduled or to-be-deleted bindings"
        in failure((StageConfig("all", EVERYTHING),), bindings=[]).message
    )


def test_pick_n_count_must_match_the_selected_bindings() -> None:
    error = failure((StageConfig("all", EVERYTHING),), policy=PlacementPolicy(PICK_N, number_of_clusters=5))

    assert error.message.endswith(
        "the number of selected bindings 4 is not equal to the observed cluster count 5"
    )


def test_observed_cluster_count_per_placement_type() -> None:
    stages = (StageConfig("all", EVERYTHING),)
    names = tuple(c.name for c in CLUSTERS)

    assert initialize(stages).policy_observed_cluster_count == 4
    assert (
        initialize(
            stages, policy=PlacementPolicy(PICK_FIXED, cluster_names=names)
        ).policy_observed_cluster_count
        == 4
    )


def test_invalid_after_stage_tasks_of_an_unvalidated_strategy_fail_initialisation() -> None:
    stage = StageConfig("all", EVERYTHING, after_stage_tasks=(StageTask(TIMED_WAIT, timedelta(0)),))

    error = failure((stage,))

    assert error.message.endswith(
        "the after stage tasks are invalid, updateStrategy: `/rings`, stage: all, "
        "err: task 0 of type TimedWait has wait duration <= 0"
    )


def test_approval_tasks_drop_any_wait_time() -> None:
    stage = StageConfig("all", EVERYTHING, after_stage_tasks=(StageTask(APPROVAL, timedelta(minutes=5)),))

    assert initialize((stage,)).stages[0].after_stage_tasks == (
        StageTaskPlan(APPROVAL, None, "release-42-after-all"),
    )
