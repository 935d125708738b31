"""How rounds are triggered and queued: after reschedules, at the requeue time, once per due moment."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from fleetui.celery import app
from placement import service
from placement.models import Placement
from placement.rollouts import rolling, tasks
from placement.scheduler.timeutil import format_time
from tests.factories import placement_role
from tests.placement.rollout_hub import AVAILABLE, SPEC, offline_crp

pytestmark = pytest.mark.django_db


def rollout(placement: Placement) -> dict[str, Any]:
    placement.refresh_from_db()
    return placement.status.get("rollout") or {}


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple, dict]]:
    """With a broker: what `apply_async` was asked to queue (nothing runs)."""
    calls: list[tuple[tuple, dict]] = []
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    monkeypatch.setattr(
        tasks.rolling_update_round, "apply_async", lambda args, **kw: calls.append((args, kw))
    )
    return calls


def test_a_reschedule_that_changes_bindings_runs_a_round() -> None:
    placement = offline_crp()
    # admin of a set of the hub (an OCM cluster's set: the CRP still has no member cluster to pick)
    editor = placement_role(placement.hub, username="editor")
    rolling.run_round(placement)
    placement.bindings.update(status=AVAILABLE)
    assert rollout(placement)["round"] == 1
    spec = {**SPEC, "policy": {"placementType": "PickN", "numberOfClusters": 2}}
    service.apply_spec(placement, spec, actor=editor)
    # the scheduler unscheduled bindings (this hub has no member clusters); the round that followed
    # removed as many as maxUnavailable allows
    summary = rollout(placement)
    assert summary["round"] == 2 and len(summary["removed"]) == summary["budgets"]["maxToRemove"] == 2
    left = [row.spec["targetCluster"] for row in placement.bindings.all()]
    assert sorted(left + summary["removed"]) == ["m1", "m2", "m3"]


def test_the_next_round_is_queued_at_its_requeue_time(queued: list) -> None:
    placement = offline_crp()
    now = timezone.now().replace(microsecond=0)
    summary = rolling.run_round(placement, now)
    assert summary["requeueAt"] == format_time(now + rolling.MIN_REQUEUE)
    [(args, options)] = queued
    assert args == (placement.pk, summary["requeueAt"]) and 0 < options["countdown"] <= 5


def test_a_round_queued_for_a_superseded_moment_is_skipped() -> None:
    placement = offline_crp()
    now = timezone.now()
    later = format_time(now + timedelta(minutes=5))
    placement.status = {"rollout": {"round": 7, "requeueAt": later}}
    placement.save(update_fields=["status"])
    assert rolling.run_round(placement, now, due=format_time(now)) is None
    assert rolling.run_round(placement, now, due=later)["round"] == 8


def test_a_round_queued_before_one_that_found_nothing_to_roll_is_skipped() -> None:
    placement = offline_crp()
    now = timezone.now()
    placement.status = {"rollout": {"round": 3, "requeueAt": None}}
    placement.save(update_fields=["status"])
    assert rolling.run_round(placement, now, due=format_time(now)) is None
    # a change still asks for a round
    assert rolling.run_round(placement, now)["round"] == 4


def test_finished_rollouts_queue_nothing(queued: list) -> None:
    placement = offline_crp(spec={**SPEC, "strategy": {"type": "External"}})
    assert rolling.run_round(placement) is None and queued == []


def test_the_periodic_runner_runs_every_due_round_nobody_holds() -> None:
    now = timezone.now()
    lost = offline_crp()
    lost.status = {"rollout": {"round": 1, "requeueAt": format_time(now - timedelta(minutes=5))}}
    lost.save(update_fields=["status"])
    due = offline_crp(hub=lost.hub, name="due")
    due.status = {"rollout": {"round": 1, "requeueAt": format_time(now - timedelta(seconds=1))}}
    due.save(update_fields=["status"])
    held = offline_crp(hub=lost.hub, name="held")
    held.status = {"rollout": {"round": 1, "requeueAt": format_time(now - timedelta(seconds=1))}}
    held.rollout_claimed_until = now + timedelta(minutes=1)
    held.save(update_fields=["status", "rollout_claimed_until"])
    later = offline_crp(hub=lost.hub, name="later")
    later.status = {"rollout": {"round": 1, "requeueAt": format_time(now + timedelta(seconds=30))}}
    later.save(update_fields=["status"])
    assert rolling.due(now) == [lost.pk, due.pk]
    assert tasks.rolling_update_due_rounds() == [lost.pk, due.pk]
    # run in-process by the eager task: the rounds happened and set their next moment
    assert rollout(lost)["round"] == 2 and rollout(due)["round"] == 2
    assert rollout(held)["round"] == 1 and rollout(later)["round"] == 1


def test_a_rollout_another_runner_holds_runs_no_round() -> None:
    placement = offline_crp()
    rolling.run_round(placement)
    Placement.objects.filter(pk=placement.pk).update(
        rollout_claimed_until=timezone.now() + timedelta(minutes=1)
    )
    assert rolling.run_round(placement) is None
    assert rollout(placement)["round"] == 1


def test_a_round_asked_for_while_another_runs_comes_after_it(queued: list) -> None:
    placement = offline_crp()
    Placement.objects.filter(pk=placement.pk).update(
        rollout_claimed_until=timezone.now() + timedelta(minutes=1)
    )
    assert rolling.run_round(placement) is None
    [(args, options)] = queued
    assert args == (placement.pk,) and options["countdown"] == rolling.MIN_REQUEUE.total_seconds()
    # with the CRP's marker, so the hub's reports meanwhile queue no other round
    placement.refresh_from_db()
    assert options["kwargs"] == {"requested": placement.round_queued_at.isoformat()}
    # a round queued for its moment is left to the runner holding the rollout, which queues its own next
    assert rolling.run_round(placement, due=format_time(timezone.now())) is None and len(queued) == 1
