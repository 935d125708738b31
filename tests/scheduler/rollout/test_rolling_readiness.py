"""Binding readiness and failure, derived from conditions as isBindingReady / HasBindingFailed do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from placement.scheduler.fleet.types import STATE_BOUND, BindingCondition, ClusterResourceBinding
from placement.scheduler.rollout.rolling import (
    APPLIED,
    AVAILABLE,
    DIFF_REPORTED,
    FALSE,
    OVERRIDDEN,
    TRUE,
    WORK_SYNCHRONIZED,
    has_binding_failed,
    is_binding_diff_reported,
    is_binding_ready,
)
from tests.scheduler.fleet.builders import binding

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
CUTOFF = NOW - timedelta(seconds=60)


def bound(*conditions: BindingCondition, generation: int = 2) -> ClusterResourceBinding:
    return binding(
        "member-1",
        STATE_BOUND,
        resource_snapshot_name="web-1-snapshot",
        generation=generation,
        conditions=conditions,
    )


def cond(
    kind: str, status: str, reason: str = "", generation: int = 2, at: datetime = NOW
) -> BindingCondition:
    return BindingCondition(kind, status, reason, generation, at)


def test_available_for_the_current_generation_is_ready() -> None:
    assert is_binding_ready(bound(cond(AVAILABLE, TRUE, "AllWorkAreAvailable")), CUTOFF) == (
        True,
        timedelta(0),
    )


def test_available_for_an_older_generation_is_not_ready_with_unknown_wait() -> None:
    binding = bound(cond(AVAILABLE, TRUE, "AllWorkAreAvailable", generation=1))

    assert is_binding_ready(binding, CUTOFF) == (False, None)


def test_diff_reported_true_is_ready_in_report_diff_mode() -> None:
    assert is_binding_ready(bound(cond(DIFF_REPORTED, TRUE)), CUTOFF)[0]


@pytest.mark.parametrize("reason", ["NotAllWorkAreAvailabilityTrackable", "WorkNotTrackable"])
def test_not_trackable_waits_out_the_unavailable_period(reason: str) -> None:
    binding = bound(cond(AVAILABLE, TRUE, reason, at=NOW - timedelta(seconds=35)))

    assert is_binding_ready(binding, CUTOFF) == (False, timedelta(seconds=25))


def test_not_trackable_older_than_the_period_is_ready() -> None:
    binding = bound(cond(AVAILABLE, TRUE, "WorkNotTrackable", at=NOW - timedelta(seconds=61)))

    assert is_binding_ready(binding, CUTOFF) == (True, timedelta(0))


def test_not_trackable_exactly_at_the_cutoff_is_not_ready_yet() -> None:
    # upstream's code, not "<= cutoff" as one might read it: ready only for a strictly negative wait
    binding = bound(cond(AVAILABLE, TRUE, "WorkNotTrackable", at=CUTOFF))

    assert is_binding_ready(binding, CUTOFF) == (False, timedelta(0))


def test_applied_false_with_an_empty_reason_is_a_failure() -> None:
    assert has_binding_failed(bound(cond(APPLIED, FALSE)))


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        (OVERRIDDEN, "OverriddenPending"),
        (WORK_SYNCHRONIZED, "WorkNotSynchronizedYet"),
        (APPLIED, "ApplyPending"),
        (AVAILABLE, "ResourceNotAvailableYet"),
    ],
)
def test_in_progress_reasons_are_not_failures(kind: str, reason: str) -> None:
    assert not has_binding_failed(bound(cond(kind, FALSE, reason)))


def test_failure_of_an_older_generation_does_not_count() -> None:
    assert not has_binding_failed(bound(cond(APPLIED, FALSE, "ManifestApplyFailed", generation=1)))


def test_diff_reported_counts_whatever_its_status() -> None:
    assert is_binding_diff_reported(bound(cond(DIFF_REPORTED, FALSE, "FailedToReportDiff")))
    assert not is_binding_diff_reported(bound(cond(DIFF_REPORTED, TRUE, generation=1)))
