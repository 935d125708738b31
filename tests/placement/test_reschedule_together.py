"""A full reschedule's chunk stores its runs together (`service.reschedule_together`): the same rows,
history entries, events, statuses and digests as the same runs stored one after the other by
`service.reschedule`; a placement whose stored state changed between its run and the chunk's lock is
scheduled again on its own, on the changed state."""

from typing import Any

import pytest

from inventory.models import Hub
from placement import service
from placement.models import ClusterResourceBinding, DecisionChange, Owner, Placement, PlacementDecision
from tests.factories import PlacementFactory
from tests.placement.conftest import NOW, WEB_SPEC

pytestmark = pytest.mark.django_db

CRP_SPEC = {
    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
    "policy": {"placementType": "PickN", "numberOfClusters": 2},
    # staged update runs roll it out, not a rolling-update round after each run (none is under test)
    "strategy": {"type": "External"},
}
# What a run stores on the placement's row (`updated` is the moment of the write, not the run's).
RUN_FIELDS = ("status", "explanation", "cluster_record", "run_digest", "last_scheduled_at")
PASSES = 2


@pytest.fixture
def chunk(manifests_hub: Hub) -> list[Placement]:
    """The hub's own placements (explained, never decided) and dashboard-owned OCM and Fleet ones."""
    for index in range(4):
        spec = {**WEB_SPEC, "numberOfClusters": 1 + index % 3}
        PlacementFactory(
            hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", name=f"web-{index}", spec=spec
        )
        PlacementFactory(
            hub=manifests_hub,
            owner=Owner.DASHBOARD,
            kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
            namespace="",
            name=f"crp-{index}",
            spec=CRP_SPEC,
        )
    return list(Placement.objects.filter(hub=manifests_hub).select_related("hub").order_by("pk"))


def stored(placements: list[Placement]) -> dict[str, Any]:
    """Everything the runs stored, without primary keys (the two ways run on rows created apart)."""
    ids = [placement.pk for placement in placements]
    rows = Placement.objects.filter(pk__in=ids).order_by("pk")
    return {
        "placements": [
            {name: bytes(value) if name == "cluster_record" else value for name, value in row.items()}
            for row in rows.values(*RUN_FIELDS)
        ],
        "decisions": list(
            PlacementDecision.objects.filter(placement__in=ids, owner=Owner.DASHBOARD)
            .order_by("pk")
            .values_list("placement__name", "name", "labels", "decisions")
        ),
        "bindings": list(
            ClusterResourceBinding.objects.filter(placement__in=ids, owner=Owner.DASHBOARD)
            .order_by("pk")
            .values_list("placement__name", "name", "labels", "annotations", "spec")
        ),
        "history": list(
            DecisionChange.objects.filter(placement__in=ids)
            .order_by("pk")
            .values_list("placement__name", "at", "trigger", "added", "removed", "selected", "actor_name")
        ),
        "events": list(
            Placement.objects.filter(pk__in=ids)
            .order_by("pk", "events__pk")
            .values_list("name", "events__at", "events__type", "events__reason", "events__message")
        ),
    }


def forget_runs(placements: list[Placement], initial: dict[int, dict[str, Any]]) -> None:
    """Back to the placements as created: no run stored, nothing decided, no history or events."""
    ids = list(initial)
    PlacementDecision.objects.filter(placement__in=ids, owner=Owner.DASHBOARD).delete()
    ClusterResourceBinding.objects.filter(placement__in=ids, owner=Owner.DASHBOARD).delete()
    DecisionChange.objects.filter(placement__in=ids).delete()
    for placement in placements:
        placement.events.all().delete()
        Placement.objects.filter(pk=placement.pk).update(**initial[placement.pk])
    service.forget_snapshots()


def run_together(hub: Hub, placements: list[Placement]) -> list[Placement]:
    rows = list(
        Placement.objects.filter(pk__in=[p.pk for p in placements]).select_related("hub").order_by("pk")
    )
    return service.reschedule_together(
        hub, rows, trigger="periodic resync", seen=service.read_stored(rows), now=NOW
    )


def test_a_chunk_stores_what_its_runs_store_one_by_one(manifests_hub: Hub, chunk: list[Placement]) -> None:
    rows = Placement.objects.filter(hub=manifests_hub).values("id", *RUN_FIELDS)
    initial = {row.pop("id"): row for row in rows}
    together = []
    for _ in range(PASSES):
        assert run_together(manifests_hub, chunk) == []
        together.append(stored(chunk))
    forget_runs(chunk, initial)
    one_by_one = []
    for _ in range(PASSES):
        for placement in Placement.objects.filter(pk__in=[p.pk for p in chunk]).order_by("pk"):
            service.reschedule(placement, trigger="periodic resync", now=NOW)
        one_by_one.append(stored(chunk))
    first = together[0]
    # the first pass decides, records each change and its events, for both families
    assert first["decisions"] and first["bindings"]
    owned = {placement.name for placement in chunk if placement.owner == Owner.DASHBOARD}
    assert {entry[0] for entry in first["history"]} >= owned and len(first["events"]) > len(chunk)
    assert together == one_by_one


def test_a_placement_changed_before_the_lock_is_scheduled_again_on_its_own(
    manifests_hub: Hub, chunk: list[Placement], monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = next(p for p in chunk if p.name == "web-0")
    read = service._Stored.read.__func__  # type: ignore[attr-defined]

    def edited_before_the_lock(cls: type, placements: list[Placement], *, lock: bool) -> Any:
        if lock and len(placements) > 1:
            Placement.objects.filter(pk=edited.pk).update(spec={**WEB_SPEC, "numberOfClusters": 3})
        return read(cls, placements, lock=lock)

    monkeypatch.setattr(service._Stored, "read", classmethod(edited_before_the_lock))
    left = run_together(manifests_hub, chunk)
    assert [placement.pk for placement in left] == [edited.pk]
    # the chunk stored every other run, and nothing of the edited one's
    assert not DecisionChange.objects.filter(placement=edited).exists()
    assert DecisionChange.objects.filter(placement__in=chunk, placement__owner=Owner.DASHBOARD).count() == 7
    assert Placement.objects.get(pk=edited.pk).last_scheduled_at is None
    service.reschedule(left[0], trigger="periodic resync", now=NOW)
    [change] = DecisionChange.objects.filter(placement=edited)
    assert len(change.selected) == 3
