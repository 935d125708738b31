"""Pure helpers of staged-run execution: maxConcurrency, TimedWait, current stage, approval labels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from placement.scheduler.intstr import IntOrStringError
from placement.scheduler.rollout.staged import (
    AFTER_STAGE,
    BEFORE_STAGE,
    StageStatus,
    approval_request_labels,
    approval_request_name,
    current_stage_index,
    max_concurrency_value,
    timed_wait_elapsed,
)

FINISHED = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "clusters", "expected"),
    [(3, 10, 3), ("50%", 10, 5), ("25%", 7, 1), ("30%", 7, 2), ("10%", 1, 1), ("50%", 0, 1), ("100%", 4, 4)],
)
def test_max_concurrency_rounds_percentages_down_with_a_minimum_of_one(
    value, clusters: int, expected: int
) -> None:
    assert max_concurrency_value(value, clusters) == expected


def test_max_concurrency_rejects_a_string_without_percent() -> None:
    with pytest.raises(IntOrStringError):
        max_concurrency_value("50", 0)


def test_timed_wait_elapses_exactly_at_finish_plus_wait() -> None:
    wait = timedelta(minutes=30)

    assert not timed_wait_elapsed(FINISHED, wait, FINISHED + wait - timedelta(microseconds=1))
    assert timed_wait_elapsed(FINISHED, wait, FINISHED + wait)


def test_current_stage_is_the_first_one_not_succeeded() -> None:
    stages = [StageStatus("canary", True), StageStatus("staging", None), StageStatus("prod", None)]

    assert current_stage_index(stages) == 1
    assert current_stage_index([StageStatus("canary", True)]) is None
    assert current_stage_index([StageStatus("canary", True), StageStatus("prod", False)]) == 1


def test_approval_request_labels_and_names() -> None:
    assert approval_request_labels("release-42", "prod", AFTER_STAGE) == {
        "kubernetes-fleet.io/targetUpdatingStage": "prod",
        "kubernetes-fleet.io/targetUpdateRun": "release-42",
        "kubernetes-fleet.io/taskType": "afterStage",
        "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
    }
    assert approval_request_name("release-42", "prod", BEFORE_STAGE) == "release-42-before-prod"
    assert approval_request_name("release-42", "prod", AFTER_STAGE) == "release-42-after-prod"


def test_unknown_task_type_is_refused() -> None:
    with pytest.raises(ValueError):
        approval_request_labels("release-42", "prod", "duringStage")
