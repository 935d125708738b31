"""A reschedule stores the report without its clusters and a packed per-cluster record; the per-cluster
rows are built from the record only when asked, equal to the scheduler's own report, and cached per
record."""

from typing import Any

import pytest

from placement import explanations, service
from placement.models import Placement
from placement.scheduler.record import ClusterRecord
from tests.placement.conftest import NOW

pytestmark = pytest.mark.django_db


def count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(ClusterRecord, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(ClusterRecord, name, counted)
    return calls


def test_a_reschedule_stores_the_record_and_builds_no_rows(
    web_placement: Placement, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows_built = count_calls(monkeypatch, "rows")
    lists_built = count_calls(monkeypatch, "columns_as_lists")
    service.reschedule(web_placement, trigger="test", now=NOW)
    assert rows_built == lists_built == []
    stored = Placement.objects.get(pk=web_placement.pk)
    assert "clusters" not in stored.explanation and stored.explanation["selected"]
    record = explanations.record(stored)
    assert len(record) + stored.explanation["outside"]["count"] == 12  # the demo fleet's OCM clusters
    assert [name for name, flag in zip(record.names, record.selected, strict=True) if flag] == [
        name for name in record.names if name in stored.explanation["selected"]
    ]


def test_the_rows_built_on_demand_are_the_scheduler_report(web_placement: Placement) -> None:
    # a second run changes nothing, so the scheduler now decides what that run stored
    service.reschedule(web_placement, trigger="test", now=NOW)
    stored = Placement.objects.get(pk=web_placement.pk)
    report = service.evaluate(stored, now=NOW).to_report(summarise_outside=True)
    del report["feasible"], report["heldDecisions"]
    answer = explanations.full(stored)
    assert list(answer) == list(report)  # `clusters` where the report lists it
    assert answer["clusters"] == report["clusters"]


def test_rows_are_cached_per_record_and_a_new_run_is_a_new_entry(
    web_placement: Placement, monkeypatch: pytest.MonkeyPatch
) -> None:
    unpacked = count_calls(monkeypatch, "unpack")
    stored = Placement.objects.get(pk=web_placement.pk)
    first = explanations.full(stored)
    assert explanations.full(Placement.objects.get(pk=web_placement.pk)) == first
    assert len(unpacked) == 1
    service.apply_spec(stored, {**stored.spec, "numberOfClusters": 1}, actor="test")
    again = explanations.full(Placement.objects.get(pk=web_placement.pk))
    assert len(unpacked) == 2
    assert [row["name"] for row in again["clusters"] if row["selected"]] == again["selected"]
    assert len(again["selected"]) == 1


def test_a_run_that_cannot_read_the_spec_stores_no_record(web_placement: Placement) -> None:
    Placement.objects.filter(pk=web_placement.pk).update(spec={"numberOfClusters": "many"})
    placement = Placement.objects.get(pk=web_placement.pk)
    service.reschedule(placement, trigger="test", now=NOW)
    stored = Placement.objects.get(pk=web_placement.pk)
    assert stored.explanation["error"].startswith("spec.numberOfClusters")
    assert bytes(stored.cluster_record) == b""
    assert len(explanations.record(stored)) == 0 and "clusters" not in explanations.full(stored)


def test_an_explanation_that_lists_its_clusters_is_read_as_a_record(web_placement: Placement) -> None:
    stored = Placement.objects.get(pk=web_placement.pk)
    rows = explanations.full(stored)["clusters"]
    as_before = {**stored.explanation, "clusters": explanations.record(stored).columns_as_lists()}
    Placement.objects.filter(pk=stored.pk).update(explanation=as_before, cluster_record=b"")
    legacy = Placement.objects.get(pk=stored.pk)
    assert explanations.record(legacy).rows() == rows
    assert explanations.full(legacy)["clusters"] == rows
