"""A CEL selector's verdict per distinct projection is kept with the inventory's projection codes: a later
run of the same expressions evaluates nothing, an inventory patched from it evaluates only the projections
the change made new, and each verdict is the one a fresh evaluation gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from placement.scheduler.ocm.cel import CelSelector
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.predicate import filter_predicates
from placement.scheduler.ocm.types import Placement
from tests.scheduler.ocm.builders import cluster, placement, score

SCORE_SEARCH = 'managedCluster.scores("load").exists(s, s.name == "cpu" && s.value > 50)'
SCORES = [0, 40, 60, 90]


def _score_search(expression: str = SCORE_SEARCH) -> Placement:
    selector = {"celSelector": {"celExpressions": [expression]}}
    return placement(predicates=[{"requiredClusterSelector": selector}])


def _inventory(size: int) -> OcmInventory:
    return OcmInventory(
        [cluster(f"c{i:03d}") for i in range(size)],
        add_on_scores=[
            score(f"c{i:03d}", "load", {"cpu": SCORES[i % len(SCORES)]}) for i in range(size) if i % 7
        ],
    )


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The name of every cluster a CEL selector evaluates, in order."""
    seen: list[str] = []
    evaluate = CelSelector.matches

    def counted(self: CelSelector, cluster_object: Any, scores: Any) -> bool:
        seen.append(cluster_object["metadata"]["name"])
        return evaluate(self, cluster_object, scores)

    monkeypatch.setattr(CelSelector, "matches", counted)
    yield seen


def _selected(placement: Placement, inventory: OcmInventory) -> list[str]:
    filtered = filter_predicates(placement, inventory, np.arange(inventory.size)).filtered
    assert filtered is not None
    return [inventory.clusters[position].name for position in filtered.tolist()]


def _expected(inventory: OcmInventory, threshold: int = 50) -> list[str]:
    def value(name: str) -> int | None:
        found = inventory.add_on_scores.get((name, "load"))
        return None if found is None else dict(found.scores)["cpu"]

    return [c.name for c in inventory.clusters if (v := value(c.name)) is not None and v > threshold]


def test_a_later_run_of_the_same_expressions_evaluates_nothing(evaluations: list[str]) -> None:
    inventory = _inventory(40)
    assert _selected(_score_search(), inventory) == _expected(inventory)
    # one evaluation per distinct score, plus one for the clusters with no score object
    assert len(evaluations) == len(SCORES) + 1
    evaluations.clear()
    assert _selected(_score_search(), inventory) == _expected(inventory)
    assert evaluations == []


def test_other_expressions_reading_the_same_are_evaluated_on_their_own(evaluations: list[str]) -> None:
    inventory = _inventory(40)
    _selected(_score_search(), inventory)
    evaluations.clear()
    stricter = _score_search(SCORE_SEARCH.replace("> 50", "> 70"))
    assert _selected(stricter, inventory) == _expected(inventory, threshold=70)
    assert len(evaluations) == len(SCORES) + 1


def test_a_patched_inventory_evaluates_only_the_projections_its_change_made_new(
    evaluations: list[str],
) -> None:
    inventory = _inventory(40)
    _selected(_score_search(), inventory)
    evaluations.clear()
    # c001 moves to a score no cluster had, c002 to one another cluster already has
    patched = inventory.patched(
        add_on_scores={
            ("c001", "load"): score("c001", "load", {"cpu": 75}),
            ("c002", "load"): score("c002", "load", {"cpu": 90}),
        }
    )
    assert _selected(_score_search(), patched) == _expected(patched)
    assert evaluations == ["c001"]
    evaluations.clear()
    # the inventory it was patched from keeps its own verdicts
    assert _selected(_score_search(), inventory) == _expected(inventory)
    assert evaluations == []


def test_two_inventories_patched_from_one_never_share_a_code_for_different_projections(
    evaluations: list[str],
) -> None:
    inventory = _inventory(40)
    _selected(_score_search(), inventory)
    high = inventory.patched(add_on_scores={("c001", "load"): score("c001", "load", {"cpu": 99})})
    low = inventory.patched(add_on_scores={("c001", "load"): score("c001", "load", {"cpu": 1})})
    assert _selected(_score_search(), high) == _expected(high)
    assert _selected(_score_search(), low) == _expected(low)
    assert "c001" in _expected(high) and "c001" not in _expected(low)
