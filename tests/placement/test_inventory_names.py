"""The records of runs on one inventory refer to its name table, stored once apart from them: a process
that never packed the table reads it back by key, and a table no placement refers to is pruned once it
has been unused for an hour."""

from datetime import timedelta

import pytest

from inventory.models import Hub
from placement import explanations, nametables, service
from placement.models import InventoryNames, Placement
from placement.scheduler import record as records
from placement.scheduler.ocm.report import OcmScheduleResult
from placement.scheduler.record import NameTable, name_table
from tests.placement.conftest import NOW

pytestmark = pytest.mark.django_db


@pytest.fixture
def forgetting_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process holds no name table, as a web process that never ran the scheduler."""
    monkeypatch.setattr(records, "_tables", {})
    records._unpacked_table.cache_clear()


def run_all(hub: Hub) -> list[Placement]:
    for placement in Placement.objects.filter(hub=hub):
        service.reschedule(placement, trigger="test", now=NOW)
    return list(Placement.objects.filter(hub=hub).order_by("pk"))


def test_runs_on_one_inventory_store_its_names_once(web_placement: Placement, manifests_hub: Hub) -> None:
    placements = run_all(manifests_hub)
    referring = [placement for placement in placements if placement.name_table_id]
    # the hub's OCM clusters are one inventory, its Fleet member clusters another
    by_kind = {placement.kind: placement.name_table_id for placement in referring}
    assert len(referring) >= 4 and len(by_kind) == 2
    assert {placement.name_table_id for placement in referring} == set(by_kind.values())
    tables = InventoryNames.objects.in_bulk()
    assert set(tables) == set(by_kind.values())
    for placement in referring:
        table = tables[placement.name_table_id]
        assert bytes(table.packed) not in bytes(placement.cluster_record)
        names = explanations.record(placement).columns["name"]
        assert isinstance(names, records.Positions) and names.table.key == table.digest
        assert table.count == len(names.table.names)
    assert sorted(table.count for table in tables.values()) == [6, 12]


def test_a_process_that_never_packed_the_table_reads_it_back(
    web_placement: Placement, manifests_hub: Hub, forgetting_tables: None
) -> None:
    service.reschedule(web_placement, trigger="test", now=NOW)
    stored = Placement.objects.get(pk=web_placement.pk)
    result = service.evaluate(stored, now=NOW)
    assert isinstance(result, OcmScheduleResult)
    expected = result.to_report(summarise_outside=True)["clusters"]
    records._tables.clear()
    records._unpacked_table.cache_clear()
    assert explanations.full(stored)["clusters"] == expected
    assert list(records._tables) == [stored.name_table_id]  # kept for the next page


def test_a_record_whose_table_is_gone_says_which(web_placement: Placement, forgetting_tables: None) -> None:
    service.reschedule(web_placement, trigger="test", now=NOW)
    stored = Placement.objects.get(pk=web_placement.pk)
    records._tables.clear()
    with pytest.raises(records.MissingNameTable, match=stored.name_table_id):
        records.ClusterRecord.unpack(bytes(stored.cluster_record), lambda key: None)
    other = name_table(("a", "b")).packed
    with pytest.raises(records.MissingNameTable, match="has the digest"):
        records.ClusterRecord.unpack(bytes(stored.cluster_record), lambda key: other)


def table_of(*names: str) -> NameTable:
    return name_table(tuple(names))


def test_unused_tables_are_pruned_when_a_new_one_is_stored(web_placement: Placement) -> None:
    service.reschedule(web_placement, trigger="test", now=NOW)
    referred = Placement.objects.get(pk=web_placement.pk).name_table_id
    old, recent = table_of("old-1", "old-2"), table_of("recent-1")
    nametables.store([old], NOW - timedelta(hours=2))
    nametables.store([recent], NOW - timedelta(minutes=30))
    InventoryNames.objects.filter(pk=referred).update(used=NOW - timedelta(days=1))
    nametables.store([table_of("new-1", "new-2")], NOW)
    assert set(InventoryNames.objects.values_list("pk", flat=True)) == {
        referred,  # old, but a placement refers to it
        recent.key,
        table_of("new-1", "new-2").key,
    }


def test_a_run_referring_to_a_stale_table_marks_it_used_so_no_prune_takes_it() -> None:
    stale, fresh = table_of("stale-1"), table_of("fresh-1")
    nametables.store([stale], NOW - timedelta(hours=3))
    nametables.store([fresh], NOW - timedelta(minutes=5))
    nametables.store([stale, fresh], NOW)
    used = dict(InventoryNames.objects.values_list("pk", "used"))
    assert used == {stale.key: NOW, fresh.key: NOW - timedelta(minutes=5)}  # fresh: not written again
    assert nametables.prune(NOW + timedelta(minutes=54)) == 0
    assert nametables.prune(NOW + timedelta(minutes=61)) == 2


def test_a_table_stored_twice_at_once_is_one_row() -> None:
    table = table_of(*(f"cluster-{i}" for i in range(100)))
    nametables.store([table, table], NOW)
    nametables.store([table], NOW)
    assert InventoryNames.objects.filter(pk=table.key).count() == 1
    assert nametables.packed(table.key) == table.packed
    assert nametables.packed("0" * 32) is None
    assert records._unpacked_table(table.packed).names == table.names
