"""ClusterStagedUpdateStrategy parsing: CRD rules plus the initializer's task checks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.labels import LabelSelector
from placement.scheduler.rollout.staged import APPROVAL, TIMED_WAIT, StageTask, parse_staged_update_strategy


def strategy(*stages: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "three-rings"}, "spec": {"stages": list(stages)}}


def parse_stage(**fields: Any):
    return parse_staged_update_strategy(strategy({"name": "canary", **fields})).stages[0]


def rejection(**fields: Any) -> ManifestError:
    with pytest.raises(ManifestError) as caught:
        parse_stage(**fields)
    return caught.value


def test_a_full_stage_is_parsed() -> None:
    stage = parse_stage(
        labelSelector={"matchLabels": {"ring": "canary"}},
        sortingLabelKey="order",
        maxConcurrency="50%",
        beforeStageTasks=[{"type": "Approval"}],
        afterStageTasks=[{"type": "TimedWait", "waitTime": "1h30m"}, {"type": "Approval"}],
    )

    assert stage.label_selector == LabelSelector(match_labels=(("ring", "canary"),))
    assert stage.sorting_label_key == "order"
    assert stage.max_concurrency == "50%"
    assert stage.before_stage_tasks == (StageTask(APPROVAL),)
    assert stage.after_stage_tasks == (
        StageTask(TIMED_WAIT, timedelta(hours=1, minutes=30)),
        StageTask(APPROVAL),
    )


def test_missing_selector_is_kept_apart_from_the_empty_selector() -> None:
    assert parse_stage().label_selector is None
    assert parse_stage(labelSelector={}).label_selector == LabelSelector()


def test_max_concurrency_defaults_to_one() -> None:
    assert parse_stage().max_concurrency == 1


@pytest.mark.parametrize("value", [0, -2, "0%", "101%", "50", "5.5%"])
def test_invalid_max_concurrency_is_rejected(value: Any) -> None:
    assert rejection(maxConcurrency=value).field == "spec.stages[0].maxConcurrency"


@pytest.mark.parametrize("name", ["Canary", "ring-1", "", "a" * 64])
def test_invalid_stage_names_are_rejected(name: str) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_staged_update_strategy(strategy({"name": name}))
    assert caught.value.field == "spec.stages[0].name"


def test_stage_names_must_be_unique() -> None:
    with pytest.raises(ManifestError, match="Duplicate value"):
        parse_staged_update_strategy(strategy({"name": "prod"}, {"name": "prod"}))


def test_at_most_31_stages() -> None:
    with pytest.raises(ManifestError, match="at most 31"):
        parse_staged_update_strategy(strategy(*({"name": f"s{i}"} for i in range(32))))


def test_two_tasks_of_the_same_type_are_rejected() -> None:
    error = rejection(afterStageTasks=[{"type": "Approval"}, {"type": "Approval"}])

    assert error.message == "afterStageTasks cannot have two tasks of the same type: Approval"


def test_zero_wait_time_passes_the_pattern_but_is_rejected() -> None:
    assert rejection(afterStageTasks=[{"type": "TimedWait", "waitTime": "0s"}]).message == (
        "task 0 of type TimedWait has wait duration <= 0"
    )


@pytest.mark.parametrize("wait", ["10", "500ms", "-1s", "1d"])
def test_wait_time_needs_hour_minute_or_second_units(wait: str) -> None:
    assert rejection(afterStageTasks=[{"type": "TimedWait", "waitTime": wait}]).field.endswith("waitTime")


def test_timed_wait_needs_a_wait_time_and_approval_takes_none() -> None:
    assert "waitTime is required" in rejection(afterStageTasks=[{"type": "TimedWait"}]).message
    assert (
        "waitTime is not allowed"
        in rejection(afterStageTasks=[{"type": "Approval", "waitTime": "1m"}]).message
    )


def test_more_than_two_after_stage_tasks_are_rejected() -> None:
    tasks = [{"type": "Approval"}, {"type": "TimedWait", "waitTime": "1m"}, {"type": "Approval"}]

    assert "at most 2" in rejection(afterStageTasks=tasks).message


def test_before_stage_tasks_allow_one_approval_only() -> None:
    assert "at most 1" in rejection(beforeStageTasks=[{"type": "Approval"}, {"type": "Approval"}]).message
    assert (
        "cannot be TimedWait" in rejection(beforeStageTasks=[{"type": "TimedWait", "waitTime": "1m"}]).message
    )


def test_invalid_label_selector_names_its_field() -> None:
    error = rejection(labelSelector={"matchExpressions": [{"key": "ring", "operator": "In"}]})

    assert error.field.startswith("spec.stages[0].labelSelector")
