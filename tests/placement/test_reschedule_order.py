"""A hub change queues first the runs of the placements whose decisions it may alter; the others still
run, after them (in-process in that order; through Redis at a lower priority, so a later change's runs
overtake them)."""

import time
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from demohub import DemoHub
from fleetui.celery import app
from inventory.changes import HubChanges
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub
from inventory.signals import hub_changed
from inventory.sync import apply_events
from placement import service, tasks, urgency
from placement.models import Placement
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.test_reschedule import GOLD, untainted

GLOBAL = {"clusterSets": ["global"]}
CEL = {
    **GLOBAL,
    "predicates": [
        {
            "requiredClusterSelector": {
                "celSelector": {"celExpressions": ["'tier' in managedCluster.metadata.labels"]}
            }
        }
    ],
}
SPARES = 4


def spare(number: int) -> dict[str, Any]:
    """A placement no label change of these tests lets select anything."""
    selector = {"matchLabels": {"tier": f"spare-{number}"}}
    return {**GLOBAL, "predicates": [{"requiredClusterSelector": {"labelSelector": selector}}]}


def placements(hub: Hub) -> dict[str, Placement]:
    """gold (tier=gold), every (no predicate: holds every untainted cluster), cel (a CEL predicate) and
    the spares, all over `global` in namespace default."""
    editor = placement_role(hub, ("default",), username="editor")
    # gold last: its run put after the others is queued after theirs
    specs = {"every": GLOBAL, "cel": CEL} | {f"spare-{n}": spare(n) for n in range(SPARES)} | {"gold": GOLD}
    return {
        name: service.create_placement(
            kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name=name, spec=spec, actor=editor
        )
        for name, spec in specs.items()
    }


def selected(placement: Placement) -> set[str]:
    return {entry["clusterName"] for row in placement.decisions.all() for entry in row.decisions}


def patch_cluster(hub: Hub, demo_hub: DemoHub, name: str, body: dict[str, Any], **how: str) -> None:
    """Change a ManagedCluster on the hub (`how`: the store's patch options) and apply it as the watch
    does."""
    demo_hub.store.patch("ManagedCluster", name, body, **how)
    obj = demo_hub.store.get("ManagedCluster", name)
    apply_events(hub, KINDS_BY_NAME["ManagedCluster"], [("MODIFIED", obj)])


def heard(hub: Hub, demo_hub: DemoHub, name: str, body: dict[str, Any], **how: str) -> HubChanges:
    """The change `patch_cluster` makes, as the change listeners hear it."""
    got: list[HubChanges] = []

    def listen(hub_changes: HubChanges, **_: object) -> None:
        got.append(hub_changes)

    hub_changed.connect(listen)
    try:
        patch_cluster(hub, demo_hub, name, body, **how)
    finally:
        hub_changed.disconnect(listen)
    [change] = got
    return change


def later_names(change: HubChanges, ours: dict[str, Placement]) -> set[str]:
    order = urgency.order(change, [p.pk for p in ours.values()])
    return {name for name, placement in ours.items() if placement.pk in order.later}


@pytest.fixture
def queued_hub(
    broker_url: str, database_url: str, demo_hub: DemoHub, monkeypatch: pytest.MonkeyPatch
) -> tuple[Hub, dict[str, Placement]]:
    """The demo hub synced, with this module's placements, and tasks sent to the broker (not run here)."""
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    hub = synced_demo_hub_row(demo_hub)
    return hub, placements(hub)


def run_worker_until(placement_ids: set[int], reschedules: list[int]) -> None:
    """Run a solo worker on the queued messages until these placements were rescheduled."""
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        deadline = time.monotonic() + 60
        while not placement_ids <= set(reschedules):
            assert time.monotonic() < deadline, "the runs put after the others never ran"
            time.sleep(0.05)


@pytest.mark.django_db
@pytest.mark.usefixtures("tasks_in_process")
def test_a_label_change_runs_the_placements_it_may_alter_first_and_the_others_after(
    demo_hub: DemoHub, reschedules: list[int]
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    ours = placements(hub)
    name = untainted(demo_hub)
    assert name in selected(ours["every"])
    reschedules.clear()

    change = heard(hub, demo_hub, name, {"metadata": {"labels": {"tier": "gold"}}})

    spares = {f"spare-{n}" for n in range(SPARES)}
    # gold may now take the cluster, every holds it, CEL may read anything: the spares cannot change
    assert later_names(change, ours) == spares
    by_pk = {placement.pk: name for name, placement in ours.items()}
    order = [by_pk[pk] for pk in reschedules if pk in by_pk]
    assert set(order[:3]) == {"gold", "every", "cel"}
    assert set(order[3:]) == spares  # run all the same
    assert name in selected(ours["gold"])


@pytest.mark.django_db
@pytest.mark.usefixtures("tasks_in_process")
def test_a_taint_runs_only_the_placements_holding_the_cluster_or_letting_it_through_first(
    demo_hub: DemoHub, reschedules: list[int]
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    ours = placements(hub)
    taint = {"key": "fleetui.io/drain", "effect": "NoSelect"}
    reschedules.clear()

    patch_cluster(hub, demo_hub, untainted(demo_hub), {"spec": {"taints": [taint]}})

    # every holds the cluster, CEL may read anything; no predicate of gold or the spares lets the cluster
    # through, tainted or not
    by_pk = {placement.pk: name for name, placement in ours.items()}
    order = [by_pk[pk] for pk in reschedules if pk in by_pk]
    assert set(order[:2]) == {"every", "cel"}
    assert set(order[2:]) == {"gold"} | {f"spare-{n}" for n in range(SPARES)}


@pytest.mark.django_db
@pytest.mark.usefixtures("tasks_in_process")
def test_the_runs_of_the_placements_holding_a_tainted_cluster_lead_the_others(
    demo_hub: DemoHub, reschedules: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    ours = placements(hub)
    editor = placement_role(hub, ("default",), username="holder")
    # created after cel, which goes first too: only the order of the runs puts this one before it
    ours["every-again"] = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=hub,
        namespace="default",
        name="every-again",
        spec=GLOBAL,
        actor=editor,
    )
    name = untainted(demo_hub)
    assert name in selected(ours["every"]) and name in selected(ours["every-again"])
    reschedules.clear()
    batches: list[list[int]] = []
    request = tasks.request_reschedule

    def sent(placement_ids: list[int], trigger: str, later: Any = (), **how: Any) -> list[int]:
        batches.append(list(placement_ids))
        return request(placement_ids, trigger, later, **how)

    monkeypatch.setattr(tasks, "request_reschedule", sent)

    patch_cluster(
        hub, demo_hub, name, {"spec": {"taints": [{"key": "fleetui.io/drain", "effect": "NoSelect"}]}}
    )

    by_pk = {placement.pk: name for name, placement in ours.items()}
    order = [by_pk[pk] for pk in reschedules if pk in by_pk]
    assert order[:3] == ["every", "every-again", "cel"]
    # the leading runs go to the broker in a batch of their own, before the others are sent
    assert [by_pk[pk] for pk in batches[0] if pk in by_pk] == ["every", "every-again"]
    assert name not in selected(ours["every-again"])


@pytest.mark.django_db
@pytest.mark.usefixtures("tasks_in_process")
def test_a_taint_on_a_candidate_passed_over_runs_later_unless_a_prioritizer_scales_by_the_candidates(
    demo_hub: DemoHub,
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")
    memory = {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1}
    specs = {
        # Balance and Steady: a cluster's score reads no other candidate
        "one": {**GLOBAL, "numberOfClusters": 1},
        # the memory score scales each candidate between the least and the most allocatable
        "one-by-memory": {**GLOBAL, "numberOfClusters": 1, "prioritizerPolicy": {"configurations": [memory]}},
    }
    ours = {
        name: service.create_placement(
            kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name=name, spec=spec, actor=editor
        )
        for name, spec in specs.items()
    }
    store, chosen = demo_hub.store, selected(ours["one"]) | selected(ours["one-by-memory"])
    name = next(
        n
        for n in store.names("ManagedCluster")
        if n not in chosen and not store.get("ManagedCluster", n)["spec"].get("taints")
    )
    taint = {"key": "fleetui.io/drain", "effect": "NoSelect"}

    change = heard(hub, demo_hub, name, {"spec": {"taints": [taint]}})

    assert later_names(change, ours) == {"one"}


@pytest.mark.django_db
@pytest.mark.usefixtures("tasks_in_process")
def test_a_change_a_prioritizer_reads_runs_every_placement_first(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    ours = placements(hub)
    status = {"status": {"allocatable": {"cpu": "96", "memory": "512Gi"}}}

    change = heard(hub, demo_hub, untainted(demo_hub), status, subresource="status")

    assert later_names(change, ours) == set()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_change_that_selects_a_cluster_overtakes_the_runs_an_earlier_change_put_after(
    queued_hub: tuple[Hub, dict[str, Placement]], demo_hub: DemoHub, reschedules: list[int]
) -> None:
    hub, ours = queued_hub
    store = demo_hub.store
    first, second = [
        n for n in store.names("ManagedCluster") if not store.get("ManagedCluster", n)["spec"].get("taints")
    ][:2]
    app.control.purge()  # messages of other runs (and of the initial sync) are not this test's
    # queued before any worker runs: the first change puts gold and the spares after every and cel, the
    # second lets gold take a cluster
    patch_cluster(hub, demo_hub, first, {"metadata": {"labels": {"tier": "bronze"}}})
    patch_cluster(hub, demo_hub, second, {"metadata": {"labels": {"tier": "gold"}}})

    spares = {ours[f"spare-{n}"].pk for n in range(SPARES)}
    run_worker_until(spares, reschedules)

    gold = reschedules.index(ours["gold"].pk)
    assert gold < min(reschedules.index(pk) for pk in spares)
    assert second in selected(ours["gold"])


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_leading_runs_of_a_change_overtake_the_runs_an_earlier_change_queued_first(
    queued_hub: tuple[Hub, dict[str, Placement]], demo_hub: DemoHub, reschedules: list[int]
) -> None:
    hub, ours = queued_hub
    editor = placement_role(hub, ("default",), username="holder")
    ours["holder"] = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=hub,
        namespace="default",
        name="holder",
        spec={**GLOBAL, "numberOfClusters": 1},
        actor=editor,
    )
    [held] = selected(ours["holder"])
    store = demo_hub.store
    labelled = next(
        n
        for n in store.names("ManagedCluster")
        if n != held and not store.get("ManagedCluster", n)["spec"].get("taints")
    )
    app.control.purge()  # messages of other runs (and of the initial sync) are not this test's
    # queued before any worker runs: the first change lets gold take a cluster (gold and cel go first,
    # the holder and the spares after them); the second taints the holder's cluster, which makes the
    # holder's run lead
    patch_cluster(hub, demo_hub, labelled, {"metadata": {"labels": {"tier": "gold"}}})
    taint = {"key": "fleetui.io/drain", "effect": "NoSelect"}
    patch_cluster(hub, demo_hub, held, {"spec": {"taints": [taint]}})

    spares = {ours[f"spare-{n}"].pk for n in range(SPARES)}
    run_worker_until(spares | {ours["holder"].pk}, reschedules)

    holder, gold, cel = (reschedules.index(ours[name].pk) for name in ("holder", "gold", "cel"))
    assert holder < min(gold, cel)
    # the rest keep their order: what the first change may alter before what it cannot
    assert max(gold, cel) < min(reschedules.index(pk) for pk in spares)
    assert held not in selected(ours["holder"])
    assert labelled in selected(ours["gold"])
