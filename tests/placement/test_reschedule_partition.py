"""A full reschedule split into chunks the workers share: the split, the chunks in-process, and what
a chunk leaves to others (queued runs, deleted placements, decisions another worker stored)."""

from collections import Counter
from typing import Any

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from inventory.models import Hub
from placement import service, tasks
from placement.models import Owner, Placement, PlacementDecision
from tests.factories import PlacementDecisionFactory, PlacementFactory
from tests.placement.conftest import WEB_SPEC

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("count", "chunk_size", "workers"),
    [(1000, 100, 2), (1000, 300, 2), (7, 2, 2), (5, 100, 2), (10, 3, 4), (1, 100, 2), (9, 4, 1), (3, 0, 0)],
)
def test_partition_takes_every_id_once_in_even_chunks(count: int, chunk_size: int, workers: int) -> None:
    ids = list(range(100, 100 + count))
    chunks = tasks.partition(ids, chunk_size, workers)
    assert sorted(pk for chunk in chunks for pk in chunk) == ids
    assert all(chunk == sorted(chunk) for chunk in chunks)
    sizes = [len(chunk) for chunk in chunks]
    assert max(sizes) - min(sizes) <= 1
    assert max(sizes) <= max(chunk_size, 1)
    assert len(chunks) % max(workers, 1) == 0 or len(chunks) == count


def test_every_chunk_carries_the_same_mix_of_the_sorted_kinds() -> None:
    """Ids sorted by kind (as hub_chunks sorts them): 400 of one kind, then 200, 200, 200 of others."""
    kinds = ["production"] * 400 + ["two-sets"] * 200 + ["global"] * 200 + ["crp"] * 200
    chunks = tasks.partition(list(range(len(kinds))), 100, 2)
    assert len(chunks) == 10
    for chunk in chunks:
        assert Counter(kinds[pk] for pk in chunk) == {
            "production": 40,
            "two-sets": 20,
            "global": 20,
            "crp": 20,
        }


def test_partition_of_nothing_is_no_chunk() -> None:
    assert tasks.partition([], 100, 2) == []


@pytest.fixture
def hub_placements(manifests_hub: Hub) -> list[Placement]:
    """The demo placements of hub manifests and five dashboard-owned ones, none scheduled yet."""
    PlacementFactory.create_batch(5, hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", spec=WEB_SPEC)
    return list(Placement.objects.filter(hub=manifests_hub).order_by("pk"))


@pytest.fixture
def reschedules(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """Placement id -> how many times a run scheduled it (a chunk's runs, stored together, or one's own)."""
    calls: Counter[int] = Counter()
    plan = service._plan

    def counted(placement: Placement, *args: Any) -> Any:
        calls[placement.pk] += 1
        return plan(placement, *args)

    monkeypatch.setattr(service, "_plan", counted)
    return calls


def test_in_process_every_placement_is_rescheduled_once_in_chunks(
    settings: Settings, hub_placements: list[Placement], reschedules: Counter[int]
) -> None:
    settings.RESCHEDULE_CHUNK_SIZE = 3
    hub = hub_placements[0].hub
    answer = tasks.reschedule_hub(hub.pk)
    # chunks of at most 3 placements, as many as a multiple of the 2 workers (10 placements: 3, 3, 2, 2)
    assert answer == {"placements": len(hub_placements), "chunks": -(-len(hub_placements) // 6) * 2}
    assert reschedules == Counter({p.pk: 1 for p in hub_placements})
    stored = Placement.objects.filter(hub=hub)
    assert not stored.filter(last_scheduled_at__isnull=True).exists()
    web = stored.filter(owner=Owner.DASHBOARD, namespace="web")
    assert all(len(p.status["decisionGroups"][0]["decisions"]) == 1 for p in web)


def test_one_broken_placement_does_not_stop_its_chunk(
    hub_placements: list[Placement], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = hub_placements[1]
    plan = service._plan

    def failing(placement: Placement, *args: Any) -> Any:
        if placement.pk == broken.pk:
            raise RuntimeError("stored spec from the future")
        return plan(placement, *args)

    monkeypatch.setattr(service, "_plan", failing)
    ids = [p.pk for p in hub_placements]
    answer = tasks.reschedule_chunk(broken.hub_id, ids)
    assert (answer["rescheduled"], answer["failed"], answer["skipped"]) == (len(ids) - 1, 1, 0)
    unscheduled = Placement.objects.filter(pk__in=ids, last_scheduled_at__isnull=True)
    assert list(unscheduled.values_list("pk", flat=True)) == [broken.pk]
    assert "stored spec from the future" in caplog.text


def test_a_chunk_leaves_queued_and_deleted_placements_alone(
    hub_placements: list[Placement], reschedules: Counter[int]
) -> None:
    queued, stale, deleted, *others = hub_placements
    Placement.objects.filter(pk=queued.pk).update(reschedule_queued_at=timezone.now())
    lost_message = timezone.now() - tasks.QUEUED_TTL * 2
    Placement.objects.filter(pk=stale.pk).update(reschedule_queued_at=lost_message)
    deleted.delete()
    answer = tasks.reschedule_chunk(queued.hub_id, [p.pk for p in hub_placements])
    assert (answer["rescheduled"], answer["skipped"]) == (len(others) + 1, 2)
    assert set(reschedules) == {stale.pk, *(p.pk for p in others)}


def test_a_chunk_for_a_deleted_hub_does_nothing(hub_placements: list[Placement]) -> None:
    answer = tasks.reschedule_chunk(10_000, [p.pk for p in hub_placements])
    assert (answer["rescheduled"], answer["skipped"]) == (0, len(hub_placements))


def test_the_chunk_snapshot_sees_decisions_another_worker_stored(manifests_hub: Hub) -> None:
    placement = PlacementFactory(hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", spec=WEB_SPEC)
    snapshot = service.hub_snapshot(manifests_hub)
    assert snapshot.ocm.decided_cluster_names("web", placement.name) == set()
    # what another worker's reschedule writes: rows only, the hub's version stays
    decision = PlacementDecisionFactory(
        placement=placement,
        owner=Owner.DASHBOARD,
        clusters=["cluster1"],
        labels={"cluster.open-cluster-management.io/placement": placement.name},
    )
    assert service.hub_snapshot(manifests_hub).ocm.decided_cluster_names("web", placement.name) == set()
    current = service.current_snapshot(manifests_hub)
    assert current is snapshot
    assert current.ocm.decided_cluster_names("web", placement.name) == {"cluster1"}
    PlacementDecision.objects.filter(pk=decision.pk).delete()
    assert service.current_snapshot(manifests_hub).ocm.decided_cluster_names("web", placement.name) == set()
