"""determineRolloutStatus: soak time for Succeeded, progress deadline for everything still in flight."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from placement.scheduler.rollout.ocm import ClusterRolloutStatus, RolloutStatus, determine_rollout_status

NOW = datetime(2022, 1, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def _status(status: str, seconds_ago: int | None = None) -> ClusterRolloutStatus:
    since = None if seconds_ago is None else NOW - timedelta(seconds=seconds_ago)
    return ClusterRolloutStatus("eu-west-1", status=status, last_transition_time=since)


def test_to_apply_always_rolls_out_unchanged() -> None:
    status = _status(RolloutStatus.TO_APPLY)
    assert determine_rollout_status(status, timedelta(0), MINUTE, NOW) == ([status], [])


def test_skip_and_timeout_are_dropped() -> None:
    assert determine_rollout_status(_status(RolloutStatus.SKIP), timedelta(0), MINUTE, NOW) == ([], [])
    assert determine_rollout_status(_status(RolloutStatus.TIME_OUT), timedelta(0), MINUTE, NOW) == ([], [])


def test_succeeded_within_min_success_time_keeps_soaking() -> None:
    rollout, timed_out = determine_rollout_status(_status(RolloutStatus.SUCCEEDED, 30), MINUTE, None, NOW)
    assert [s.recheck_time for s in rollout] == [NOW + timedelta(seconds=30)]
    assert timed_out == []


def test_succeeded_without_transition_time_soaks_from_now() -> None:
    rollout, _ = determine_rollout_status(_status(RolloutStatus.SUCCEEDED), 2 * MINUTE, None, NOW)
    assert rollout[0].recheck_time == NOW + 2 * MINUTE


def test_succeeded_once_soaked_is_done() -> None:
    # upstream: now == end of soak is no longer "before" it
    assert determine_rollout_status(_status(RolloutStatus.SUCCEEDED, 60), MINUTE, None, NOW) == ([], [])
    assert determine_rollout_status(_status(RolloutStatus.SUCCEEDED, 120), MINUTE, None, NOW) == ([], [])


def test_progressing_within_deadline_is_rechecked_at_the_deadline() -> None:
    rollout, _ = determine_rollout_status(_status(RolloutStatus.PROGRESSING, 30), timedelta(0), MINUTE, NOW)
    assert rollout[0].status == RolloutStatus.PROGRESSING
    assert rollout[0].recheck_time == NOW + timedelta(seconds=30)


def test_failed_at_the_deadline_times_out_with_its_recheck_time() -> None:
    rollout, timed_out = determine_rollout_status(
        _status(RolloutStatus.FAILED, 60), timedelta(0), MINUTE, NOW
    )
    assert rollout == []
    assert [(s.status, s.recheck_time) for s in timed_out] == [(RolloutStatus.TIME_OUT, NOW)]


def test_zero_deadline_times_out_at_once() -> None:
    _, timed_out = determine_rollout_status(
        _status(RolloutStatus.PROGRESSING), timedelta(0), timedelta(0), NOW
    )
    assert [s.status for s in timed_out] == [RolloutStatus.TIME_OUT]


def test_infinite_deadline_rolls_out_without_recheck() -> None:
    stale = _status(RolloutStatus.FAILED, 10**6)
    rollout, _ = determine_rollout_status(stale, timedelta(0), None, NOW)
    assert rollout == [stale]
    assert rollout[0].recheck_time is None


def test_unknown_status_is_judged_like_progressing() -> None:
    rollout, _ = determine_rollout_status(_status("Degraded", 30), timedelta(0), MINUTE, NOW)
    _, timed_out = determine_rollout_status(_status("Degraded", 60), timedelta(0), MINUTE, NOW)
    assert [s.status for s in rollout] == ["Degraded"]
    assert [s.status for s in timed_out] == [RolloutStatus.TIME_OUT]
