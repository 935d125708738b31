"""A reschedule runs the scheduler outside its write transaction and stores the result only if what it
read is still stored (compare and set): concurrent writers never wait on a scheduler run, and a
result computed on a state that changed meanwhile is computed again, not stored."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from inventory.models import Hub
from placement import service
from placement.families import fleet, ocm
from placement.models import Placement
from tests.placement.conftest import NOW, WEB_SPEC

pytestmark = pytest.mark.django_db(transaction=True)
CRP_SPEC = {
    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
    "policy": {"placementType": "PickN", "numberOfClusters": 2},
}


class SchedulerRuns:
    """Every scheduler run of the service: whether a transaction was open, and a hook run (once) during
    the first run after `during` is set, in another thread with its own database connection."""

    def __init__(self) -> None:
        self.in_transaction: list[bool] = []
        self.during: Callable[[], Any] | None = None

    def run(self, real: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.in_transaction.append(connection.in_atomic_block)
        hook, self.during = self.during, None
        if hook is not None:
            other = threading.Thread(target=_with_own_connection, args=(hook,))
            other.start()
            # a writer that waited on a lock held by this run would still be waiting here
            other.join(timeout=30)
            assert not other.is_alive(), "the concurrent writer waited on the scheduler run"
        return real(*args, **kwargs)


def _with_own_connection(hook: Callable[[], Any]) -> None:
    try:
        hook()
    finally:
        connection.close()


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> SchedulerRuns:
    spy = SchedulerRuns()
    for adapter, name in ((ocm, "schedule_placement"), (fleet, "schedule_crp")):
        real = getattr(adapter, name)
        monkeypatch.setattr(adapter, name, lambda *a, real=real, **k: spy.run(real, *a, **k))
    return spy


def edit(placement: Placement, spec: dict[str, Any]) -> None:
    """A spec edit, stored and rescheduled at the moment the demo MemberClusters are healthy."""
    Placement.objects.filter(pk=placement.pk).update(spec=spec)
    service.reschedule(Placement.objects.get(pk=placement.pk), trigger="spec edited", now=NOW)


def sized(spec: dict[str, Any], n: int) -> dict[str, Any]:
    if "policy" in spec:
        return {**spec, "policy": {**spec["policy"], "numberOfClusters": n}}
    return {**spec, "numberOfClusters": n}


def _selected(placement: Placement) -> set[str]:
    if placement.family.namespaced:
        return {d["clusterName"] for row in placement.decisions.all() for d in row.decisions}
    return {b.spec["targetCluster"] for b in placement.bindings.all() if b.spec["state"] != "Unscheduled"}


def test_the_scheduler_runs_outside_the_write_transaction(
    runs: SchedulerRuns, manifests_hub: Hub, editor: User
) -> None:
    for kind, namespace, spec in (
        (Placement.Kind.PLACEMENT, "web", WEB_SPEC),
        (Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "", CRP_SPEC),
    ):
        placement = service.create_placement(
            kind=kind, hub=manifests_hub, namespace=namespace, name="shop", spec=spec, actor=editor
        )
        edit(placement, sized(spec, 3))
        assert len(_selected(placement)) == 3
    assert len(runs.in_transaction) == 4 and not any(runs.in_transaction)


@pytest.mark.parametrize(
    ("kind", "namespace", "spec"),
    [(Placement.Kind.PLACEMENT, "web", WEB_SPEC), (Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "", CRP_SPEC)],
)
def test_a_result_computed_on_a_state_that_changed_meanwhile_is_computed_again(
    runs: SchedulerRuns, manifests_hub: Hub, editor: User, kind: str, namespace: str, spec: dict[str, Any]
) -> None:
    placement = service.create_placement(
        kind=kind, hub=manifests_hub, namespace=namespace, name="shop", spec=spec, actor=editor
    )
    edit(placement, spec)
    assert len(_selected(placement)) == 2
    # while an edit to 3 clusters is being scheduled, another person's edit to 1 is stored first
    runs.during = lambda: edit(placement, sized(spec, 1))
    runs.in_transaction.clear()
    edit(placement, sized(spec, 3))
    # the stale result for 3 is refused; the stored spec (1) is scheduled again and changes nothing
    assert len(runs.in_transaction) == 3
    assert len(_selected(placement)) == 1
    moves = [len(c.selected) for c in placement.history.order_by("-pk") if c.added or c.removed]
    assert moves[0] == 1 and 3 not in moves  # the last move is to 1 cluster


def test_status_keys_the_scheduler_does_not_read_are_kept_and_cost_no_second_run(
    runs: SchedulerRuns, manifests_hub: Hub, editor: User
) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=manifests_hub,
        namespace="web",
        name="shop",
        spec=WEB_SPEC,
        actor=editor,
    )

    def rollout_round() -> None:
        row = Placement.objects.get(pk=placement.pk)
        Placement.objects.filter(pk=placement.pk).update(status={**row.status, "rollout": {"round": 7}})

    runs.during = rollout_round
    runs.in_transaction.clear()
    edit(placement, sized(WEB_SPEC, 3))
    assert len(runs.in_transaction) == 1
    placement.refresh_from_db()
    assert placement.status["rollout"] == {"round": 7}
    assert placement.status["numberOfSelectedClusters"] == 3
